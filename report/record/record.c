/* record.c: `perfscope record [-o OUT] [-F HZ] [--clock C] [--unwind U] [--no-report] -- CMD
 * [ARG...]` (docs/record.md): CMD run under the shim through the one process runner
 * (proc/runner.h), its exit status returned as its own, OUT/launcher.json written with what only
 * its parent knows, then one line and the short report on stderr. It must never run anything
 * before every option is checked, never record into an earlier run (an existing OUT becomes
 * OUT.old), never rename or remove anything that is not a run folder (a user's folder given as
 * -o by mistake is left whole and the run refused), and never write on stdout: that is CMD's
 * alone. */
#include "record.h"
#include "report.h"
#include "files.h"
#include "strv.h"
#include "outfile.h"
#include "runfolder.h"
#include "samples.h"
#include "version.h"
#include "container/container.h"
#include "proc/runner.h"
#include "run/run.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;


struct record_opts {
    const char *out;
    const char *hz, *clock, *unwind;
    int no_report;
    char **cmd;
};

static int usage(const char *why, const char *arg)
{
    char line[512];
    snprintf(line, sizeof line, why, arg);
    report_fail("record: %s (usage: perfscope " RECORD_USAGE ")", line);
    return REPORT_BAD_INPUT;
}

static int parse(int argc, char **argv, struct record_opts *o)
{
    memset(o, 0, sizeof *o);
    o->out = "perfscope-out";
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char **val = NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break; /* CMD without "--" */
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            val = &o->out;
        else if (strcmp(a, "-F") == 0 || strcmp(a, "--freq") == 0)
            val = &o->hz;
        else if (strcmp(a, "--clock") == 0)
            val = &o->clock;
        else if (strcmp(a, "--unwind") == 0)
            val = &o->unwind;
        else if (strcmp(a, "--no-report") == 0) {
            o->no_report = 1;
            continue;
        } else
            return usage("unknown option %.80s", a);
        if (i + 1 >= argc)
            return usage("%.80s needs a value", a);
        *val = argv[++i];
    }
    if (i >= argc)
        return usage("%s", "no command to record");
    o->cmd = argv + i;
    if (!*o->out)
        return usage("%s", "-o needs a folder");
    /* "out/" is the folder out: OUT.old must be its sibling, not a name inside it */
    size_t len = strlen(o->out);
    if (len > 1 && o->out[len - 1] == '/') {
        static char out[PATH_MAX];
        if (len >= sizeof out)
            return usage("-o %.80s...: path too long", o->out);
        memcpy(out, o->out, len + 1);
        while (len > 1 && out[len - 1] == '/')
            out[--len] = 0;
        o->out = out;
    }
    if (o->hz) {
        char *end;
        errno = 0;
        long hz = strtol(o->hz, &end, 10);
        if (!*o->hz || *end || errno || hz < 0 || hz > 100000)
            return usage("-F %.80s: not a rate from 0 to 100000 Hz", o->hz);
    }
    if (o->clock && strcmp(o->clock, "perf") != 0 && strcmp(o->clock, "timer") != 0 &&
        strcmp(o->clock, "auto") != 0)
        return usage("--clock %.80s: not perf, timer or auto", o->clock);
    if (o->unwind && strcmp(o->unwind, "libunwind") != 0 && strcmp(o->unwind, "fp") != 0 &&
        strcmp(o->unwind, "kernel") != 0)
        return usage("--unwind %.80s: not libunwind, fp or kernel", o->unwind);
    return 0;
}

/* CMD's file as execvp would find it, or "" when it is not found (the runner then says so). */
static void which(const char *cmd, char *buf, size_t size)
{
    buf[0] = 0;
    if (strchr(cmd, '/')) {
        snprintf(buf, size, "%s", cmd);
        return;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, size, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", cmd);
        if (access(buf, X_OK) == 0)
            return;
        path += len + (path[len] == ':');
    }
    buf[0] = 0;
}

/* One line on stderr when the shim cannot be in CMD: a setuid or setgid file (ld.so ignores
 * LD_PRELOAD there), an ELF executable without an interpreter (static). Returns 1 when said. */
static int say_unmeasurable(const char *cmd)
{
    char file[PATH_MAX];
    which(cmd, file, sizeof file);
    struct stat st;
    if (!file[0] || stat(file, &st) != 0)
        return 0;
    /* Only a change of identity makes ld.so ignore LD_PRELOAD (AT_SECURE): root running its own
     * setuid-root file is measured. */
    int suid = (st.st_mode & S_ISUID) && st.st_uid != geteuid();
    int sgid = (st.st_mode & S_ISGID) && st.st_gid != getegid();
    if (suid || sgid) {
        fprintf(stderr, "perfscope record: %s is set%cid: ld.so will not load the shim in it; it runs "
                        "unmeasured\n", cmd, suid ? 'u' : 'g');
        return 1;
    }
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_Ehdr eh;
    int is_static = 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_EXEC && eh.e_phentsize == sizeof(Elf64_Phdr)) {
        is_static = 1;
        for (unsigned i = 0; i < eh.e_phnum && i < 4096; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof ph)) != (ssize_t)sizeof ph)
                break;
            if (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC) {
                is_static = 0;
                break;
            }
        }
    }
    close(fd);
    if (is_static)
        fprintf(stderr, "perfscope record: %s is a static executable: the shim cannot load in it; it "
                        "runs unmeasured\n", cmd);
    return is_static;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Whether record may move path aside, or remove it as an older OUT.old: a folder that holds what
 * only perfscope writes (an earlier record's launcher.json, the shim's .leader lock or one of its
 * sample files), or an empty one. A folder that merely holds a meta.json or a perfscope.log
 * (common names) does not count, nor a file or a link: those are the user's (a folder of theirs
 * given as -o by mistake) and are never renamed or removed. */
static int replaceable(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    static const char *const own[] = {RUN_LAUNCHER, RUN_LEADER_LOCK, NULL};
    char p[PATH_MAX];
    for (int i = 0; own[i]; i++)
        if (runfolder_path(p, sizeof p, path, own[i], NULL, 0) == 0 && lstat(p, &st) == 0 && S_ISREG(st.st_mode))
            return 1;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int empty = 1, samples = 0;
    long pid;
    unsigned gen;
    for (struct dirent *e; !samples && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        empty = 0;
        samples = samples_parse_name(e->d_name, &pid, &gen) == 0;
    }
    closedir(d);
    return empty || samples;
}

/* Whether a run is still recording into the run folder path: its leader holds the exclusive lock
 * on .leader for as long as it lives (a shared lock is refused meanwhile, and ours is dropped at
 * once). Moved aside or removed under a live run, the folder was written by two runs at once: the
 * earlier went on writing into OUT (a newcomer's second record into the same -o while the first
 * ran: one procs.jsonl held both runs, and the first one's report overwrote the second's). */
static int in_use(const char *path)
{
    char p[PATH_MAX];
    if (runfolder_path(p, sizeof p, path, RUN_LEADER_LOCK, NULL, 0) != 0)
        return 0;
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    int busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

/* mkdir -p of path's parent folders (outfile_make_dirs); path itself is not made, so that its
 * own mkdir still fails on a folder that appeared meanwhile. */
static int make_parents(const char *path, char *err, size_t errlen)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    char *slash = strrchr(p, '/');
    if (!slash || slash == p)
        return 0;
    *slash = 0;
    if (outfile_make_dirs(p, 0755) != 0) {
        snprintf(err, errlen, "%s: %s", p, strerror(errno));
        return -1;
    }
    return 0;
}

/* An existing OUT that is a run folder becomes OUT.old (an older OUT.old, a run folder too,
 * removed); then OUT is made afresh, its missing parents with it. An OUT or OUT.old that is
 * not a run folder, or one a live run still records into, is left as it is and the run refused. */
static int fresh_out(const char *out, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(out, &st) == 0) {
        char old[PATH_MAX];
        if (snprintf(old, sizeof old, "%s.old", out) >= (int)sizeof old) {
            snprintf(err, errlen, "%s: path too long", out);
            return -1;
        }
        if (!replaceable(out)) {
            snprintf(err, errlen, "%s: is there and is not a perfscope run folder (no %s, %s or sample "
                     "file): left as it is; give -o a new folder or an earlier run's", out, RUN_LAUNCHER,
                     RUN_LEADER_LOCK);
            return -1;
        }
        for (int i = 0; i < 2; i++) {
            const char *p = i ? old : out;
            if (replaceable(p) && in_use(p)) {
                snprintf(err, errlen, "%s: a run is still recording into it (its leader holds %s): left as "
                         "it is; give -o another folder, or wait for that run to end", p, RUN_LEADER_LOCK);
                return -1;
            }
        }
        if (lstat(old, &st) == 0 && !replaceable(old)) {
            snprintf(err, errlen, "%s: is there and is not a perfscope run folder, so %s cannot be kept "
                     "there: both left as they are", old, out);
            return -1;
        }
        if (lstat(old, &st) == 0 && nftw(old, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0) {
            snprintf(err, errlen, "%s: cannot remove: %s", old, strerror(errno));
            return -1;
        }
        if (rename(out, old) != 0) {
            snprintf(err, errlen, "%s: cannot rename to %s: %s", out, old, strerror(errno));
            return -1;
        }
    } else if (make_parents(out, err, errlen) != 0) {
        return -1;
    }
    if (mkdir(out, 0755) != 0) {
        snprintf(err, errlen, "%s: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}

static int setenv_fmt(char ***env, size_t *n, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    char **e = realloc(*env, (*n + 2) * sizeof *e);
    if (!s || !e) {
        free(s);
        if (e)
            *env = e;
        return -1;
    }
    *env = e;
    snprintf(s, len, "%s=%s", name, value);
    e[(*n)++] = s;
    e[*n] = NULL;
    return 0;
}

/* The environment make_env made: its first owned entries are its own. */
static void free_env(char **env, size_t owned)
{
    for (size_t i = 0; env && i < owned; i++)
        free(env[i]);
    free(env);
}

static int dropped(const char *entry)
{
    static const char *const names[] = {"LD_PRELOAD=", "PERFSCOPE_OUT=", "LLMPERFSCOPE_CPUPROF_OUT=",
                                        "LLMPERFSCOPE_MARKERS=", "PERFSCOPE_MARKERS=", NULL};
    for (int i = 0; names[i]; i++)
        if (strncmp(entry, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

static int is_var(const char *entry, const char *name)
{
    size_t l = strlen(name);
    return strncmp(entry, name, l) == 0 && entry[l] == '=';
}

/* CMD's environment: ours, with the shim first in LD_PRELOAD, PERFSCOPE_OUT, the options, and
 * LLMPERFSCOPE_MARKERS (the caller's, or PERFSCOPE_MARKERS's, else OUT/markers), and
 * PERFSCOPE_MARKERS the same: a script may append to the file under either name. */
static char **make_env(const struct record_opts *o, const char *shim, const char *out_abs, size_t *owned)
{
    char **env = NULL;
    size_t n = 0;
    const char *preload = getenv("LD_PRELOAD");
    const char *markers = record_markers_env();
    char own_markers[PATH_MAX + 16];
    snprintf(own_markers, sizeof own_markers, "%s/markers", out_abs);
    char *pre = NULL;
    if (asprintf(&pre, "%s%s%s", shim, preload && *preload ? " " : "", preload ? preload : "") < 0)
        return NULL;
    int bad = setenv_fmt(&env, &n, "LD_PRELOAD", pre) || setenv_fmt(&env, &n, "PERFSCOPE_OUT", out_abs) ||
              setenv_fmt(&env, &n, "LLMPERFSCOPE_MARKERS", markers ? markers : own_markers) ||
              setenv_fmt(&env, &n, "PERFSCOPE_MARKERS", markers ? markers : own_markers) ||
              (o->hz && setenv_fmt(&env, &n, "PERFSCOPE_HZ", o->hz)) ||
              (o->clock && setenv_fmt(&env, &n, "PERFSCOPE_CLOCK", o->clock)) ||
              (o->unwind && setenv_fmt(&env, &n, "PERFSCOPE_UNWIND", o->unwind));
    free(pre);
    *owned = n;
    for (char **e = environ; !bad && *e; e++) {
        if (dropped(*e) || (o->hz && is_var(*e, "PERFSCOPE_HZ")) || (o->clock && is_var(*e, "PERFSCOPE_CLOCK")) ||
            (o->unwind && is_var(*e, "PERFSCOPE_UNWIND")))
            continue;
        char **g = realloc(env, (n + 2) * sizeof *g);
        if (!g)
            bad = 1;
        else {
            env = g;
            env[n++] = *e; /* borrowed: the environment outlives the run */
            env[n] = NULL;
        }
    }
    if (bad) {
        free_env(env, n < *owned ? n : *owned);
        return NULL;
    }
    return env;
}

/* OUT/launcher.json (docs/formats.md): what only the parent knows. */
static int write_launcher(const char *out, char **cmd, const char *shim, const struct proc_outcome *r,
                          char *err, size_t errlen)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *argv = cJSON_AddArrayToObject(j, "command");
    for (char **a = cmd; *a && argv; a++)
        cJSON_AddItemToArray(argv, cJSON_CreateString(*a));
    cJSON_AddStringToObject(j, "shim", shim);
    cJSON_AddNumberToObject(j, "pid", r->pid);
    char st[64];
    if (r->exited)
        snprintf(st, sizeof st, "exit %d", r->code);
    else if (r->signaled && sigabbrev_np(r->sig))
        snprintf(st, sizeof st, "signal SIG%s", sigabbrev_np(r->sig)); /* meta.json's words */
    else if (r->signaled)
        snprintf(st, sizeof st, "signal %d", r->sig);
    else
        snprintf(st, sizeof st, "unknown");
    cJSON_AddStringToObject(j, "status", st);
    cJSON_AddNumberToObject(j, "wait_status", r->status);
    if (r->exited)
        cJSON_AddNumberToObject(j, "exit_code", r->code);
    else
        cJSON_AddNullToObject(j, "exit_code");
    if (r->signaled)
        cJSON_AddNumberToObject(j, "signal", r->sig);
    else
        cJSON_AddNullToObject(j, "signal");
    cJSON *ru = cJSON_AddObjectToObject(j, "rusage");
    cJSON_AddNumberToObject(ru, "user_s", r->user_s);
    cJSON_AddNumberToObject(ru, "system_s", r->sys_s);
    cJSON_AddNumberToObject(ru, "max_rss_kib", (double)r->maxrss_kib);
    cJSON_AddNumberToObject(j, "start_ns", (double)r->start_ns);
    cJSON_AddNumberToObject(j, "end_ns", (double)r->end_ns);
    cJSON_AddNumberToObject(j, "wall_s", r->wall_s);
    cJSON_AddStringToObject(j, "clock", "CLOCK_MONOTONIC");
    cJSON_AddStringToObject(j, "version", PERFSCOPE_VERSION);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/launcher.json", out);
    int rc = outfile_write_json(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

/* Whether the shim wrote anything into out (a run too short for meta.json still leaves its
 * sample file and procs.jsonl): anything but launcher.json. */
static int shim_wrote(const char *out)
{
    DIR *d = opendir(out);
    if (!d)
        return 0;
    int any = 0;
    for (struct dirent *e; !any && (e = readdir(d));)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
              strcmp(e->d_name, "launcher.json") != 0 && strncmp(e->d_name, "container.", 10) != 0 &&
              strcmp(e->d_name, "symfs") != 0;
    closedir(d);
    return any;
}

static volatile sig_atomic_t forward_sig;

/* A signal for us goes on to CMD, which decides. One from the terminal (si_code SI_KERNEL)
 * reached CMD already: it is in our process group. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si && si->si_code == SI_KERNEL)
        return;
    forward_sig = sig;
}

int cmd_record(int argc, char **argv)
{
    struct record_opts o;
    if (parse(argc, argv, &o) != 0)
        return REPORT_BAD_INPUT;
    char shim[PATH_MAX];
    int found = shim_path(shim, sizeof shim);
    if (found != 0) {
        if (found == -1)
            report_fail("record: PERFSCOPE_SHIM=%.200s is not an absolute path to a readable file",
                        getenv("PERFSCOPE_SHIM"));
        else
            report_fail("record: no %s beside this program nor in ../lib/perfscope/ (build it: make)",
                        SHIM_FILE_NAME);
        return REPORT_BAD_INPUT;
    }
    char err[REPORT_ERR_MAX];
    if (fresh_out(o.out, err, sizeof err) != 0) {
        report_fail("record: %s", err);
        return REPORT_BAD_INPUT;
    }
    char out_abs[PATH_MAX];
    if (!realpath(o.out, out_abs)) {
        report_fail("record: %s: %s", o.out, strerror(errno));
        return REPORT_BAD_INPUT;
    }
    size_t owned = 0;
    char **env = make_env(&o, shim, out_abs, &owned);
    if (!env) {
        report_fail("record: out of memory");
        return REPORT_BAD_INPUT;
    }
    static struct container ct; /* large: the pid map */
    int in_container = container_run_index(o.cmd) >= 0;
    char **cargv = NULL, **cenv = NULL;
    if (in_container &&
        container_prepare(&ct, o.cmd, out_abs, shim, env, &cargv, &cenv, err, sizeof err) != 0) {
        free_env(env, owned);
        report_fail("record: %s", err);
        return REPORT_BAD_INPUT;
    }
    int unmeasurable = in_container ? 0 : say_unmeasurable(o.cmd[0]);

    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    /* A container: a signal for us stops the container itself (the client only reaches it
     * while attached), then the client. */
    struct proc_cmd c = {
        .argv = in_container ? cargv : o.cmd,
        .envp = in_container ? cenv : env,
        .who = "perfscope record",
        .same_group = 1,
        .forward = in_container ? NULL : &forward_sig,
        .before_kill = in_container ? container_stop : NULL,
        .before_kill_arg = &ct,
    };
    struct proc_outcome r;
    if (in_container)
        container_follow(&ct);
    proc_run(&c, 0, in_container ? &forward_sig : NULL, &r);
    if (in_container)
        container_finish(&ct, r.interrupted, &forward_sig, 0, "perfscope record");
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    free_env(env, owned);
    strv_free_v(cargv);
    strv_free_v(cenv);
    if (!r.started) {
        report_fail("record: %s", r.error);
        return REPORT_BAD_INPUT;
    }
    int status = r.exited ? r.code : r.signaled ? 128 + r.sig : 1;
    if (write_launcher(o.out, o.cmd, shim, &r, err, sizeof err) != 0)
        report_fail("record: %s", err);
    if (!shim_wrote(o.out)) {
        if (!unmeasurable && !proc_never_ran(&r))
            fprintf(stderr, "perfscope record: the shim did not load in %s (ld.so refused it, or a static "
                            "or setuid executable): nothing was measured\n", o.cmd[0]);
        fprintf(stderr, "perfscope record: nothing recorded -> %s\n", o.out);
        return status;
    }
    if (run_record_summary(o.out, !o.no_report, stderr, err, sizeof err) != 0)
        report_fail("record: %s", err);
    return status;
}
