/* outfile.c: temporary name, then rename (see outfile.h). It must never leave a temporary file
 * behind on any path out, never report success for a write that failed, and never leave the
 * real name missing or half written, even for a moment. */
#include "outfile.h"
#include "runfolder.h"
#include "utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- temporary files of a tool that is killed ----
 * Ctrl-C or a SIGTERM while a tool writes (trace.json runs to hundreds of MB) left
 * "<name>.tmp.<pid>" behind, which no later run, of another pid, removes (a reader's review: 7
 * of 56 timed kills). Each temporary file is listed here while it exists; SIGINT, SIGTERM and
 * SIGHUP, where the tool left them at their default, remove the listed files and then end the
 * tool by the same signal, as the default would have. A tool that handles them itself (the
 * matrix stops its arms) is left to do so, and its outfile_abort removes them. The handler
 * calls only unlink, sigaction and raise. */
#define LIVE_MAX 16
static struct {
    _Atomic int state; /* 0 free, 1 being filled in, 2 listed */
    char tmp[sizeof ((struct outfile *)0)->tmp];
} live[LIVE_MAX];
static atomic_flag handlers_set = ATOMIC_FLAG_INIT;

static void on_kill_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < LIVE_MAX; i++)
        if (atomic_load(&live[i].state) == 2)
            unlink(live[i].tmp);
    errno = saved;
    raise(sig); /* SA_RESETHAND: the default now, delivered as the handler returns */
}

static void set_handlers(void)
{
    if (atomic_flag_test_and_set(&handlers_set))
        return;
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* ignored, or the tool's own */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_kill_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void list_tmp(struct outfile *o)
{
    set_handlers();
    for (int i = 0; i < LIVE_MAX; i++) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&live[i].state, &expected, 1))
            continue;
        memcpy(live[i].tmp, o->tmp, sizeof live[i].tmp);
        atomic_store(&live[i].state, 2);
        o->slot = i;
        return;
    }
}

/* After the temporary name is gone (renamed into place or removed). */
static void unlist_tmp(struct outfile *o)
{
    if (o->slot >= 0 && o->slot < LIVE_MAX)
        atomic_store(&live[o->slot].state, 0);
    o->slot = -1;
}

/* The temporary file is always made new: a leftover of the same name (a process of the same
 * pid that died) is removed first, and a name that appears meanwhile, a symbolic link above
 * all, is never opened (O_EXCL | O_NOFOLLOW): what is written goes nowhere but there. */
static int open_tmp(struct outfile *o, const char *path, int update, char *err, size_t errlen)
{
    o->f = NULL;
    o->buf = NULL;
    o->derived = 0;
    o->slot = -1;
    int n = snprintf(o->path, sizeof o->path, "%s", path);
    int m = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof o->path || m < 0 || (size_t)m >= sizeof o->tmp) {
        snprintf(err, errlen, "%.200s: path too long", path);
        return -1;
    }
    unlink(o->tmp);
    list_tmp(o); /* before it exists: a kill from here on removes it */
    int fd = open(o->tmp, (update ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    o->f = fd >= 0 ? fdopen(fd, update ? "w+" : "w") : NULL;
    if (!o->f) {
        int saved = errno;
        snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(saved));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        unlist_tmp(o);
        return -1;
    }
    if (update)
        return 0;
    o->buf = malloc(OUTFILE_BUFFER_BYTES);
    if (o->buf && setvbuf(o->f, o->buf, _IOFBF, OUTFILE_BUFFER_BYTES) != 0) {
        free(o->buf);
        o->buf = NULL;
    }
    return 0;
}

int outfile_open_path(struct outfile *o, const char *path, char *err, size_t errlen)
{
    return open_tmp(o, path, 0, err, errlen);
}

int outfile_open_update(struct outfile *o, const char *path, char *err, size_t errlen)
{
    return open_tmp(o, path, 1, err, errlen);
}

int outfile_open(struct outfile *o, const char *dir, const char *name, char *err, size_t errlen)
{
    char path[sizeof o->path];
    if (runfolder_path(path, sizeof path, dir, name, err, errlen) != 0)
        return -1;
    if (outfile_open_path(o, path, err, errlen) != 0)
        return -1;
    o->derived = 1;
    return 0;
}

int outfile_make_dirs(const char *path, unsigned mode)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int outfile_write_all(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    struct outfile o;
    if (outfile_open_path(&o, path, err, errlen) != 0)
        return -1;
    if (len && fwrite(data, 1, len, o.f) != len) {
        snprintf(err, errlen, "%s: cannot write: %s", o.path, strerror(errno ? errno : EIO));
        outfile_abort(&o);
        return -1;
    }
    return outfile_commit(&o, err, errlen);
}

/* Into place. A derived output (outfile_open: the symbolizer's, rebuilt from the run folder by
 * running it again) over a regular file is exchanged with it (renameat2 RENAME_EXCHANGE) and the
 * old file, now under the temporary name, removed: the real name holds the old file, then the
 * new one, never nothing, as with rename. A plain rename over a file makes ext4 (auto_da_alloc)
 * allocate and start writing the new file out before it returns: 3.4-3.9 ms for the bench's 3.4
 * MB trace.json on this VM, on the symbolizer's longest path at every re-run, against 0.02 ms
 * for the exchange and 1.4 ms for the old file's removal (its cached pages freed); 34.3 -> 30.3
 * ms for the whole tool (12 alternated pairs, each on its own folder). The price is ext4's
 * promise for a crash soon after: an output replaced this way may then come back empty, as a
 * new one always could, which only a file rebuilt by running the tool again may pay; every
 * other file (run.json, a matrix's results, launcher.json) is renamed over. Anything but a
 * regular file there (a link, a folder, a file system without the exchange) takes the rename,
 * which fails over a folder; if the old file cannot be removed (a folder put there meanwhile),
 * the names are exchanged back and the commit fails as the rename would. */
static int into_place(const struct outfile *o)
{
    struct stat st;
    if (o->derived && lstat(o->path, &st) == 0 && S_ISREG(st.st_mode) &&
        renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE) == 0) {
        if (unlink(o->tmp) == 0)
            return 0;
        int saved = errno;
        renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_EXCHANGE); /* as it was */
        errno = saved;
        return -1;
    }
    return rename(o->tmp, o->path);
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
    if (!o->f)
        return -1;
    int bad = ferror(o->f);
    int saved = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    o->f = NULL;
    free(o->buf);
    o->buf = NULL;
    if (bad) {
        snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(saved ? saved : EIO));
        unlink(o->tmp);
        unlist_tmp(o);
        return -1;
    }
    if (into_place(o) != 0) {
        snprintf(err, errlen, "%s: cannot rename into place: %s", o->path, strerror(errno));
        unlink(o->tmp);
        unlist_tmp(o);
        return -1;
    }
    unlist_tmp(o);
    return 0;
}

void outfile_abort(struct outfile *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    free(o->buf);
    o->buf = NULL;
    unlink(o->tmp);
    unlist_tmp(o);
}

char *outfile_json_text(const cJSON *obj)
{
    char *text = cJSON_Print(obj);
    if (text)
        utf8_fix_text(text);
    return text;
}

int outfile_write_json(const char *path, const cJSON *obj, char *err, size_t errlen)
{
    char *text = outfile_json_text(obj);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = strlen(text);
    char *withnl = realloc(text, n + 2);
    if (!withnl) {
        free(text);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    int rc = outfile_write_all(path, withnl, n + 1, err, errlen);
    free(withnl);
    return rc;
}
