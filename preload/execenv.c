/* execenv.c: the shim's own LD_PRELOAD entry and run folder variables made absolute for a new
 * image (execenv.h). Everything here after execenv_start must stay async-signal-safe and never
 * touch the target's memory but the copy it makes. */
#include "execenv.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "shim.h"

static char self_path[PATH_MAX];  /* the shim's file, absolute; "" unknown */
static char rel_entry[PATH_MAX];  /* the relative LD_PRELOAD entry that names the shim; "" none */

/* The run folder's variables: a value the target's environment gave relative is made the
 * absolute one config.c exported (only where this process records the run). Of the two markers
 * variables only the one the markers file came from (config_markers_var). */
static const char *const run_vars[] = {"PERFSCOPE_OUT", "LLMPERFSCOPE_MARKERS", "LLMPERFSCOPE_CPUPROF_OUT",
                                       "PERFSCOPE_MARKERS"};
#define NRUN_VARS (sizeof run_vars / sizeof run_vars[0])
static char run_from[NRUN_VARS][PATH_MAX]; /* as given, relative; "" not rewritten */

/* ld.so splits LD_PRELOAD on spaces and colons. */
static int preload_sep(char c)
{
    return c == ' ' || c == ':';
}

/* LD_PRELOAD's value v with every entry equal to rel_entry replaced by self_path, into out (when
 * not NULL; size is then enough, as a first call with out NULL measured); returns its length, or
 * 0 when no entry matched. */
static size_t fix_preload(const char *v, char *out)
{
    size_t rl = strlen(rel_entry), sl = strlen(self_path), n = 0;
    int matched = 0;
    for (const char *p = v; *p;) {
        if (preload_sep(*p)) {
            if (out)
                out[n] = *p;
            n++;
            p++;
            continue;
        }
        const char *e = p;
        while (*e && !preload_sep(*e))
            e++;
        const char *w = p;
        size_t wl = (size_t)(e - p);
        if (wl == rl && memcmp(p, rel_entry, rl) == 0) {
            w = self_path;
            wl = sl;
            matched = 1;
        }
        if (out)
            memcpy(out + n, w, wl);
        n += wl;
        p = e;
    }
    if (out)
        out[n] = 0;
    return matched ? n : 0;
}

static int have_fixes; /* anything for execenv_fix to look for */

/* The next entry of an LD_PRELOAD value from *cursor (its start, *len bytes), or NULL at the
 * end; *cursor moves past it. */
static const char *next_entry(const char **cursor, size_t *len)
{
    const char *p = *cursor;
    while (*p && preload_sep(*p))
        p++;
    const char *e = p;
    while (*e && !preload_sep(*e))
        e++;
    *cursor = e;
    *len = (size_t)(e - p);
    return e > p ? p : NULL;
}

/* The entries a cd breaks: relative, with a slash (a bare name is searched in the library
 * path, an absolute one needs nothing). */
static int relative_with_slash(const char *p, size_t len)
{
    return *p != '/' && memchr(p, '/', len) != NULL;
}

static int has_relative_entry(const char *v)
{
    size_t len;
    for (const char *c = v, *p; (p = next_entry(&c, &len)) != NULL;)
        if (relative_with_slash(p, len))
            return 1;
    return 0;
}

void execenv_start(void)
{
    const char *markers_var = config_markers_var();
    for (size_t i = 0; i < NRUN_VARS; i++) {
        const char *r = getenv(run_vars[i]);
        if ((i == 1 || i == 3) && (!markers_var || strcmp(run_vars[i], markers_var) != 0))
            continue;
        if (r && *r && r[0] != '/' && strlen(r) < sizeof run_from[i]) {
            memcpy(run_from[i], r, strlen(r) + 1);
            have_fixes = 1;
        }
    }
    const char *v = getenv("LD_PRELOAD");
    Dl_info info;
    char self[PATH_MAX];
    /* The shim's own path is resolved only when some entry could name it relatively (an
     * absolute LD_PRELOAD, as perfscope record and the bench set it, costs no realpath). */
    if (!v || !*v || !has_relative_entry(v) || !dladdr((void *)execenv_start, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return;
    memcpy(self_path, self, strlen(self) + 1);
    /* Of the entries a cd breaks, ours is the one that is this file. */
    size_t len;
    for (const char *c = v, *p; (p = next_entry(&c, &len)) != NULL;) {
        char entry[PATH_MAX], real[PATH_MAX];
        if (len < sizeof entry && relative_with_slash(p, len)) {
            memcpy(entry, p, len);
            entry[len] = 0;
            if (realpath(entry, real) && strcmp(real, self_path) == 0) {
                memcpy(rel_entry, entry, len + 1);
                break;
            }
        }
    }
    if (!rel_entry[0])
        return;
    have_fixes = 1;
    size_t n = fix_preload(v, NULL);
    char *fixed = n ? malloc(n + 1) : NULL;
    if (fixed) {
        fix_preload(v, fixed);
        setenv("LD_PRELOAD", fixed, 1);
        free(fixed);
    }
}

void execenv_put(const char *name, const char *value)
{
    if (getenv(name)) {
        setenv(name, value, 1); /* replaced in its slot: the array itself stays */
        return;
    }
    size_t n = 0, nl = strlen(name), vl = strlen(value);
    while (environ && environ[n])
        n++;
    char **env = malloc((n + 2) * sizeof *env);
    char *entry = malloc(nl + vl + 2);
    if (!env || !entry) {
        free(env);
        free(entry);
        return;
    }
    memcpy(entry, name, nl);
    entry[nl] = '=';
    memcpy(entry + nl + 1, value, vl + 1);
    if (n)
        memcpy(env, environ, n * sizeof *env);
    env[n] = entry;
    env[n + 1] = NULL;
    environ = env;
}

/* The absolute value of run variable i, as config.c exported it. */
static const char *run_to(size_t i)
{
    return i == 0 ? ps_cfg.out_dir : i == 2 ? ps_cfg.file_prefix : ps_cfg.markers;
}

/* "NAME=" prefix test without strncmp's locale worries (none, but plain). */
static const char *value_of(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && entry[n] == '=' ? entry + n + 1 : NULL;
}

/* The rewritten text of one entry into out (when not NULL: then as large as a first call with
 * out NULL said); its length + 1, or 0 when the entry stays as it is. */
static size_t fix_entry(const char *entry, char *out)
{
    const char *v;
    if (rel_entry[0] && (v = value_of(entry, "LD_PRELOAD")) != NULL) {
        size_t pre = (size_t)(v - entry);
        size_t n = fix_preload(v, out ? out + pre : NULL);
        if (n && out)
            memcpy(out, entry, pre);
        return n ? pre + n + 1 : 0;
    }
    if (!ps_active)
        return 0;
    for (size_t i = 0; i < NRUN_VARS; i++) {
        if (!run_from[i][0] || (v = value_of(entry, run_vars[i])) == NULL || strcmp(v, run_from[i]) != 0)
            continue;
        const char *to = run_to(i);
        size_t pre = (size_t)(v - entry), tl = strlen(to);
        if (to[0] != '/')
            return 0;
        if (out) {
            memcpy(out, entry, pre);
            memcpy(out + pre, to, tl + 1);
        }
        return pre + tl + 1;
    }
    return 0;
}

char *const *execenv_fix(char *const envp[], struct execenv *e)
{
    e->mem = NULL;
    e->len = 0;
    if (!envp || !have_fixes || getpid() != ps_pid)
        return envp; /* nothing to fix; or a vfork child: the parent's memory, hands off */
    int saved = errno;
    size_t n = 0, extra = 0;
    for (; envp[n]; n++)
        extra += fix_entry(envp[n], NULL);
    if (!extra) {
        errno = saved;
        return envp;
    }
    size_t len = (n + 1) * sizeof(char *) + extra;
    void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        errno = saved;
        return envp;
    }
    char **out = mem;
    char *text = (char *)mem + (n + 1) * sizeof(char *), *end = (char *)mem + len;
    for (size_t i = 0; i < n; i++) {
        size_t l = fix_entry(envp[i], NULL); /* measured again: never past the end */
        if (l && l <= (size_t)(end - text)) {
            fix_entry(envp[i], text);
            out[i] = text;
            text += l;
        } else {
            out[i] = envp[i];
        }
    }
    out[n] = NULL;
    e->mem = mem;
    e->len = len;
    errno = saved;
    return out;
}

void execenv_release(struct execenv *e)
{
    if (!e->mem)
        return;
    int saved = errno;
    munmap(e->mem, e->len);
    e->mem = NULL;
    errno = saved;
}
