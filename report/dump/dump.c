/* dump.c: `perfscope-report dump samples|maps|phases FILE [QUERY...]` prints what the readers in
 * format/ make of one file, one fact a line, so tests and people can check the readers
 * against the format. It must never print anything before a file has been accepted (a refused
 * file gives one line on stderr and exit 2, nothing on stdout).
 *
 *   samples: "header count= dropped= max_frames= hz=", then per record
 *            "record <time_ns> <tid> <nframes> <frame,frame,...|-> <comm>",
 *            "end records= held= cut= beyond_count= clamped=", and "note <text>" if any.
 *   maps:    "snapshot t=<ns> n=<n>", "map <start>-<end> <perms> <offset> <path>", then for
 *            each query ADDR@T (hex address, decimal ns) "lookup ADDR@T <start>-<end> <path>"
 *            or "lookup ADDR@T none", and "end snapshots= bad_lines= cut_lines= empty_snapshots=".
 *   phases:  "boundary <t_ns> <name> begin|end tokens=<n> source=<s> matched=<0|1>",
 *            "phase <name> <start> <end> tokens=<n> open=<0|1> depth=<d> parent=<i>", then for
 *            each query T "at <T> <group>", and "end phases= groups= bad_lines= unmatched_ends=
 *            unclosed=".
 *   run:     DIR: what the run folder recorded, section by section (dump_run.c): meta, samples
 *            per file and thread, samples per phase group, boundaries, counters, the log. */
#include "dump.h"
#include "report.h"
#include "maps.h"
#include "phases.h"
#include "samples.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int dump_samples(const char *path)
{
    char err[REPORT_ERR_MAX], note[512];
    struct samples_file sf;
    if (samples_open(&sf, path, err, sizeof err) != 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }
    printf("header count=%" PRIu64 " dropped=%" PRIu64 " max_frames=%" PRIu64 " hz=%" PRIu64 "\n",
           sf.hdr.count, sf.hdr.dropped, sf.hdr.max_frames, sf.hdr.hz);
    struct sample s;
    int rc;
    while ((rc = samples_next(&sf, &s, err, sizeof err)) == 1) {
        printf("record %" PRIu64 " %" PRIu32 " %" PRIu32 " ", s.time_ns, s.tid, s.nframes);
        for (uint32_t i = 0; i < s.nframes; i++)
            printf("%s%" PRIx64, i ? "," : "", s.frames[i]);
        printf("%s %s\n", s.nframes ? "" : "-", s.comm);
    }
    printf("end records=%" PRIu64 " held=%" PRIu64 " cut=%d beyond_count=%" PRIu64
           " clamped=%" PRIu64 "\n",
           sf.done, sf.held, sf.cut, sf.beyond_count, sf.clamped);
    samples_note(&sf, note, sizeof note);
    if (note[0])
        printf("note %s\n", note);
    samples_close(&sf);
    if (rc < 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }
    return 0;
}

/* "ADDR@T": hex address, decimal time. */
static int parse_query(const char *q, uint64_t *addr, uint64_t *t)
{
    char *end;
    *addr = strtoull(q, &end, 16);
    if (end == q || *end != '@')
        return -1;
    const char *ts = end + 1;
    *t = strtoull(ts, &end, 10);
    return (end == ts || *end) ? -1 : 0;
}

static int dump_maps(const char *path, int nq, char **queries)
{
    char err[REPORT_ERR_MAX];
    struct maps *m;
    if (maps_load(path, &m, err, sizeof err) != 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }
    for (size_t i = 0; i < m->nsnap; i++) {
        const struct maps_snapshot *s = &m->snaps[i];
        printf("snapshot t=%" PRIu64 " n=%zu\n", s->t_ns, s->n);
        for (size_t j = 0; j < s->n; j++) {
            const struct maps_entry *e = &s->entries[j];
            printf("map %" PRIx64 "-%" PRIx64 " %s %" PRIx64 " ", e->start, e->end, e->perms,
                   e->offset);
            put_clean(stdout, e->path);
            putchar('\n');
        }
    }
    int rc = 0;
    for (int i = 0; i < nq; i++) {
        uint64_t addr, t;
        if (parse_query(queries[i], &addr, &t) != 0) {
            report_fail("bad query '%s' (want HEXADDR@NS)", queries[i]);
            rc = REPORT_BAD_INPUT;
            break;
        }
        const struct maps_entry *e = maps_lookup(m, addr, t);
        printf("lookup %s ", queries[i]);
        if (e) {
            printf("%" PRIx64 "-%" PRIx64 " ", e->start, e->end);
            put_clean(stdout, e->path[0] ? e->path : "[anon]");
            putchar('\n');
        } else {
            printf("none\n");
        }
    }
    printf("end snapshots=%zu bad_lines=%zu cut_lines=%zu empty_snapshots=%zu\n", m->nsnap,
           m->bad_lines, m->cut_lines, m->empty_snapshots);
    maps_free(m);
    return rc;
}

static int dump_phases(const char *path, int nq, char **queries)
{
    char err[REPORT_ERR_MAX];
    struct phases *p;
    if (phases_load(path, &p, err, sizeof err) != 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }
    for (size_t i = 0; i < p->nb; i++) {
        const struct phase_boundary *b = &p->b[i];
        printf("boundary %" PRIu64 " %s %s tokens=%lld source=%s matched=%d\n", b->t_ns, b->name,
               b->begin ? "begin" : "end", b->tokens, b->source[0] ? b->source : "-", b->matched);
    }
    for (size_t i = 0; i < p->n; i++) {
        const struct phase *ph = &p->v[i];
        printf("phase %s %" PRIu64 " %" PRIu64 " tokens=%lld open=%d depth=%d parent=%d\n",
               ph->name, ph->start_ns, ph->end_ns, ph->tokens, ph->open, ph->depth, ph->parent);
    }
    int rc = 0;
    for (int i = 0; i < nq; i++) {
        char *end;
        uint64_t t = strtoull(queries[i], &end, 10);
        if (end == queries[i] || *end) {
            report_fail("bad query '%s' (want NS)", queries[i]);
            rc = REPORT_BAD_INPUT;
            break;
        }
        printf("at %" PRIu64 " %s\n", t, phases_group_at(p, t));
    }
    printf("end phases=%zu groups=%zu bad_lines=%zu unmatched_ends=%zu unclosed=%zu\n", p->n,
           p->ngroups, p->bad_lines, p->unmatched_ends, p->unclosed);
    phases_free(p);
    return rc;
}

int cmd_dump(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[0], "samples") == 0 && argc == 2)
        return dump_samples(argv[1]);
    if (argc >= 2 && strcmp(argv[0], "maps") == 0)
        return dump_maps(argv[1], argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[0], "phases") == 0)
        return dump_phases(argv[1], argc - 2, argv + 2);
    if (argc == 2 && strcmp(argv[0], "run") == 0)
        return dump_run(argv[1]);
    report_fail("usage: perfscope-report dump samples FILE | maps FILE [HEXADDR@NS...] | "
                "phases FILE [NS...] | run DIR");
    return REPORT_BAD_INPUT;
}
