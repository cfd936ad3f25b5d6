/* summary_samples.c: the summary's sample sections: every cpuprof.*.bin of the run streamed once
 * through format/samples.c, counted per thread and per phase group. It must never hold more
 * than one record at a time, nor more than SUMMARY_MAX_THREADS threads per file. */
#include "report.h"
#include "phasegroups.h"
#include "runextent.h"
#include "summary.h"
#include "maps.h"
#include "textfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define THREAD_SLOTS (2 * SUMMARY_MAX_THREADS) /* power of two, half full at most */
#define THREADS_SHOWN 32

static struct thread_count *thread_slot(struct file_summary *fs, uint32_t tid)
{
    size_t j = (tid * 2654435761u) & (THREAD_SLOTS - 1);
    while (fs->slots[j] >= 0) {
        if (fs->threads[fs->slots[j]].tid == tid)
            return &fs->threads[fs->slots[j]];
        j = (j + 1) & (THREAD_SLOTS - 1);
    }
    if (fs->nthreads == SUMMARY_MAX_THREADS)
        return NULL;
    fs->slots[j] = (int)fs->nthreads;
    struct thread_count *t = &fs->threads[fs->nthreads++];
    t->tid = tid;
    return t;
}

static void count_sample(struct run_summary *r, struct file_summary *fs, const struct sample *s)
{
    struct thread_count *t = thread_slot(fs, s->tid);
    if (t) {
        t->samples++;
        memcpy(t->comm, s->comm, sizeof t->comm);
    } else {
        fs->other_samples++;
    }
    if (s->nframes == 0)
        fs->empty_stacks++;
    size_t g = r->phases ? r->phases->ngroups : 0;
    int ph = r->phases ? phases_at(r->phases, s->time_ns) : -1;
    if (ph >= 0)
        g = (size_t)r->phases->v[ph].group;
    r->groups[g].samples++;
    if (fs->hdr.hz)
        r->groups[g].cpu_s += 1.0 / (double)fs->hdr.hz;
    if (r->total_samples == 0 || s->time_ns < r->first_sample_ns)
        r->first_sample_ns = s->time_ns;
    if (r->total_samples == 0 || s->time_ns > r->last_sample_ns)
        r->last_sample_ns = s->time_ns;
    r->total_samples++;
}

/* The .maps beside a .bin: optional for this summary, but a present one must read. */
static int read_maps_of(struct file_summary *fs, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (samples_maps_path(fs->path, path, sizeof path) != 0)
        return 0;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    struct maps *m;
    if (maps_load(path, &m, err, errlen) != 0)
        return -1;
    fs->has_maps = 1;
    fs->maps_snapshots = m->nsnap;
    fs->maps_bad_lines = m->bad_lines + m->cut_lines;
    maps_free(m);
    return 0;
}

static int by_samples_desc(const void *a, const void *b)
{
    const struct thread_count *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

static int read_file(struct run_summary *r, struct file_summary *fs, char *err, size_t errlen)
{
    fs->threads = calloc(SUMMARY_MAX_THREADS, sizeof *fs->threads);
    fs->slots = malloc(THREAD_SLOTS * sizeof *fs->slots);
    if (!fs->threads || !fs->slots) {
        reader_error(err, errlen, fs->path, "out of memory");
        return -1;
    }
    memset(fs->slots, -1, THREAD_SLOTS * sizeof *fs->slots);
    struct samples_file sf;
    if (samples_open(&sf, fs->path, err, errlen) != 0)
        return -1;
    fs->hdr = sf.hdr;
    if (!sf.hdr.hz)
        r->cpu_s_unknown = 1;
    struct sample s;
    int rc;
    while ((rc = samples_next(&sf, &s, err, errlen)) == 1)
        count_sample(r, fs, &s);
    fs->records = sf.done;
    samples_note(&sf, fs->note, sizeof fs->note);
    samples_close(&sf);
    if (rc < 0)
        return -1;
    /* Busiest threads first; the tid hash is not needed any more. */
    free(fs->slots);
    fs->slots = NULL;
    qsort(fs->threads, fs->nthreads, sizeof *fs->threads, by_samples_desc);
    return read_maps_of(fs, err, errlen);
}

/* The run's sample files, sorted by pid then exec generation. */
static int list_files(struct run_summary *r, char *err, size_t errlen)
{
    struct samples_name *names;
    size_t n;
    if (samples_list(r->dir, &names, &n, err, errlen) != 0)
        return -1;
    int rc = 0;
    r->files = calloc(n ? n : 1, sizeof *r->files);
    if (!r->files) {
        reader_error(err, errlen, r->dir, "out of memory");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct file_summary *fs = &r->files[i];
        if (snprintf(fs->path, sizeof fs->path, "%s", names[i].path) >= (int)sizeof fs->path) {
            reader_error(err, errlen, r->dir, "path too long");
            rc = -1;
            break;
        }
        fs->name = strrchr(fs->path, '/') + 1;
        fs->pid = names[i].pid;
        fs->gen = names[i].gen;
        r->nfiles++;
    }
    samples_list_free(names, n);
    return rc;
}

/* Occurrences, wall time and tokens per group (format/phasegroups.c), once the open phases end
 * where the run ends (format/runextent.c). */
static int sum_groups(struct run_summary *r)
{
    struct run_extent ext;
    run_extent_find(r->dir, &r->meta, r->first_sample_ns, r->last_sample_ns, r->phases, &ext);
    size_t ng = r->phases ? r->phases->ngroups : 0;
    for (size_t g = 0; g <= ng; g++)
        r->groups[g].tokens = -1;
    if (!r->phases)
        return 0;
    struct group_index gi;
    if (group_index_build(r->phases, &gi) != 0)
        return -1;
    for (size_t g = 0; g < ng; g++) {
        struct group_basic b;
        group_basic(r->phases, &gi, (int)g, &b);
        r->groups[g].times = (unsigned)b.occurrences;
        r->groups[g].wall_s = b.wall_s;
        r->groups[g].tokens = b.tokens;
    }
    group_index_free(&gi);
    return 0;
}

int load_samples(struct run_summary *r, char *err, size_t errlen)
{
    size_t ng = r->phases ? r->phases->ngroups : 0;
    r->groups = calloc(ng + 1, sizeof *r->groups);
    if (!r->groups) {
        reader_error(err, errlen, r->dir, "out of memory");
        return -1;
    }
    if (list_files(r, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < r->nfiles; i++)
        if (read_file(r, &r->files[i], err, errlen) != 0)
            return -1;
    if (sum_groups(r) != 0) {
        reader_error(err, errlen, r->dir, "out of memory");
        return -1;
    }
    return 0;
}

void free_samples(struct run_summary *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        free(r->files[i].threads);
        free(r->files[i].slots);
    }
    free(r->files);
    free(r->groups);
}

static void print_threads(const struct file_summary *fs)
{
    for (size_t i = 0; i < fs->nthreads && i < THREADS_SHOWN; i++) {
        const struct thread_count *t = &fs->threads[i];
        printf("    tid %-8" PRIu32 " %-16s %10" PRIu64 " samples  %5.1f%%\n", t->tid, t->comm,
               t->samples, fs->records ? 100.0 * (double)t->samples / (double)fs->records : 0.0);
    }
    if (fs->nthreads > THREADS_SHOWN) {
        uint64_t rest = 0;
        for (size_t i = THREADS_SHOWN; i < fs->nthreads; i++)
            rest += fs->threads[i].samples;
        printf("    ... %zu more threads, %" PRIu64 " samples\n", fs->nthreads - THREADS_SHOWN,
               rest);
    }
    if (fs->other_samples)
        printf("    ... more than %d threads: %" PRIu64 " samples not told apart\n",
               SUMMARY_MAX_THREADS, fs->other_samples);
}

void print_samples(const struct run_summary *r)
{
    printf("\nsamples: %" PRIu64 " in %zu file%s", r->total_samples, r->nfiles,
           r->nfiles == 1 ? "" : "s");
    if (r->total_samples)
        printf(", over %.3f s", (double)(r->last_sample_ns - r->first_sample_ns) / 1e9);
    printf("\n");
    for (size_t i = 0; i < r->nfiles; i++) {
        const struct file_summary *fs = &r->files[i];
        printf("  %s  pid %ld", fs->name, fs->pid);
        if (fs->gen)
            printf(" (exec %u)", fs->gen);
        printf("  samples %" PRIu64 "  dropped %" PRIu64 "  hz %" PRIu64 "  max_frames %" PRIu64
               "\n",
               fs->records, fs->hdr.dropped, fs->hdr.hz, fs->hdr.max_frames);
        if (fs->note[0])
            printf("    note: %s\n", fs->note);
        if (fs->empty_stacks)
            printf("    note: %" PRIu64 " samples without any frame\n", fs->empty_stacks);
        if (!fs->has_maps)
            printf("    maps: missing (addresses cannot be symbolized)\n");
        else if (fs->maps_bad_lines)
            printf("    maps: %zu snapshot%s, %zu bad lines skipped\n", fs->maps_snapshots,
                   fs->maps_snapshots == 1 ? "" : "s", fs->maps_bad_lines);
        else
            printf("    maps: %zu snapshot%s\n", fs->maps_snapshots,
                   fs->maps_snapshots == 1 ? "" : "s");
        print_threads(fs);
    }
}

void print_groups(const struct run_summary *r)
{
    size_t ng = r->phases ? r->phases->ngroups : 0;
    printf("\nphase groups (a sample counts in the innermost phase open at its time):\n");
    printf("  %-20s %5s %10s %10s %10s %6s %9s\n", "group", "times", "wall s", "tokens",
           "samples", "share", "cpu s");
    for (size_t g = 0; g <= ng; g++) {
        const struct group_stat *gs = &r->groups[g];
        if (g == ng && gs->samples == 0 && ng > 0)
            continue; /* (none) with nothing in it says nothing */
        char tokens[32] = "-", wall[32] = "-", cpu[32] = "?";
        if (gs->tokens >= 0)
            snprintf(tokens, sizeof tokens, "%lld", gs->tokens);
        if (g < ng)
            snprintf(wall, sizeof wall, "%.3f", gs->wall_s);
        if (!r->cpu_s_unknown)
            snprintf(cpu, sizeof cpu, "%.3f", gs->cpu_s);
        double share = r->total_samples ? 100.0 * (double)gs->samples / (double)r->total_samples : 0;
        printf("  %-20s %5u %10s %10s %10" PRIu64 " %5.1f%% %9s\n",
               g < ng ? r->phases->groups[g] : PHASES_NONE, gs->times, wall, tokens, gs->samples,
               share, cpu);
    }
}
