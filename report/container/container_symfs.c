/* container_symfs.c: OUT/symfs/<path> for a container run (container.h). The maps hold paths
 * inside the container, so after it stops each mapped file that holds a frame of any sample is
 * copied out with the client's `cp` (the container is kept until then); the symbolizer looks
 * there first (docs/symbolize.md). It reads the samples and maps through format/'s readers
 * only, and must never copy a file no sample lands in, nor write outside OUT/symfs. */
#include "container.h"
#include "maps.h"
#include "samples.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SYMFS_MAX_FILES 4096

struct paths {
    char **v;
    size_t n;
};

static int has(const struct paths *p, const char *s)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i], s) == 0)
            return 1;
    return 0;
}

static void add(struct paths *p, const char *s)
{
    if (p->n >= SYMFS_MAX_FILES || has(p, s))
        return;
    char **v = realloc(p->v, (p->n + 1) * sizeof *v);
    if (!v)
        return;
    p->v = v;
    if ((p->v[p->n] = strdup(s)))
        p->n++;
}

/* The files of one sample file's frames (return addresses looked up at address - 1). */
static void frames_files(const char *bin, struct paths *out)
{
    char mpath[4096], err[512];
    struct maps *m = NULL;
    if (samples_maps_path(bin, mpath, sizeof mpath) != 0 || maps_load(mpath, &m, err, sizeof err) != 0)
        return;
    struct samples_file sf;
    if (samples_open(&sf, bin, err, sizeof err) != 0) {
        maps_free(m);
        return;
    }
    /* Interned paths: one maps file's entries share a pointer per path. */
    const char *seen[256];
    size_t nseen = 0;
    struct sample s;
    while (samples_next(&sf, &s, err, sizeof err) == 1) {
        for (uint32_t i = 0; i < s.nframes; i++) {
            uint64_t a = s.frames[i] - (i > 0 && s.frames[i] > 0);
            const struct maps_entry *e = maps_lookup_near(m, a, s.time_ns);
            if (!e || e->path[0] != '/')
                continue;
            size_t k = 0;
            while (k < nseen && seen[k] != e->path)
                k++;
            if (k < nseen)
                continue;
            if (nseen < sizeof seen / sizeof seen[0])
                seen[nseen++] = e->path;
            add(out, e->path);
        }
    }
    samples_close(&sf);
    maps_free(m);
}

/* mkdir -p of path's folder. */
static int make_parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        int r = mkdir(path, 0755);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

int container_copy_symbols(struct container *c, int *failed, const char *who)
{
    (void)who;
    *failed = 0;
    struct samples_name *names = NULL;
    size_t n = 0;
    char err[512];
    if (samples_list(c->out, &names, &n, err, sizeof err) != 0)
        return 0;
    struct paths files = {0};
    for (size_t i = 0; i < n; i++)
        frames_files(names[i].path, &files);
    samples_list_free(names, n);
    int copied = 0;
    for (size_t i = 0; i < files.n; i++) {
        const char *p = files.v[i];
        char dest[PATH_MAX * 2], src[PATH_MAX + 100];
        if (strstr(p, "/../") || snprintf(dest, sizeof dest, "%s/symfs%s", c->out, p) >= (int)sizeof dest ||
            snprintf(src, sizeof src, "%s:%s", c->id, p) >= (int)sizeof src || make_parents(dest) != 0) {
            (*failed)++;
            continue;
        }
        if (container_tool(c, NULL, 0, 120.0, "cp", "-L", src, dest, NULL) == 0)
            copied++;
        else
            (*failed)++;
    }
    for (size_t i = 0; i < files.n; i++)
        free(files.v[i]);
    free(files.v);
    return copied;
}
