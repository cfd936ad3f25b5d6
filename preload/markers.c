/* markers.c: the marker protocol (docs/formats.md). Takes the lines the target's scripts append to
 * the markers file (parsed by markerline.c), and records every phase boundary, from the file or from the in-process API
 * (include/perfscope.h), as one line of phases.jsonl with the counters read at that instant.
 * A bad line is logged with its number and skipped; nothing here may ever stop the target. */
#include "markers.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "counters/counters.h"
#include "fds.h"
#include "leader.h"
#include "log.h"
#include "procs.h"
#include "shim.h"
#include "xfsz.h"
#include "runfolder.h"

static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

void markers_after_fork(void)
{
    pthread_mutex_init(&record_lock, NULL);
}

/* A file of the run is never seen empty (the readers refuse an empty counters.jsonl, and a
 * process may end between an open that creates the file and its first write): the first line is
 * written into an unnamed file (O_TMPFILE), which is linked into place whole; a process that
 * ends in between leaves nothing behind. 0 when it is in; -1 when the file was there already or
 * the file system cannot (the caller then appends, creating it). */
static int create_with(const char *path, const char *text, size_t len)
{
    if (!fds_may_open())
        return -1;
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (!slash || n >= sizeof dir)
        return -1;
    memcpy(dir, path, n);
    dir[n ? n : 1] = 0;
    if (!n)
        dir[0] = '/';
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    fds_run_share_fd(fd, 0644);
    int rc = write(fd, text, len) == (ssize_t)len && linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : -1;
    ps_real_close(fd);
    return rc;
}

void markers_append_line(const char *name, const char *text)
{
    char path[PATH_MAX];
    ps_path(path, sizeof path, name);
    size_t len = strlen(text);
    int fd = fds_run_open(path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (fd < 0 && errno == ENOENT) {
        if (create_with(path, text, len) == 0)
            return;
        fd = fds_run_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        ps_log_once(name, "cannot append to %s: %s", path, strerror(errno));
        return;
    }
    /* One write per line (or per batch of whole lines), so concurrent appenders never
     * interleave inside a line. */
    if (write(fd, text, len) != (ssize_t)len)
        ps_log_once(name, "short write to %s: %s", path, strerror(errno));
    fds_run_close(fd);
}

void markers_append_jsonl(const char *file, cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);
    if (!text)
        return;
    size_t len = strlen(text);
    char *line = malloc(len + 2);
    if (line) {
        memcpy(line, text, len);
        line[len] = '\n';
        line[len + 1] = 0;
        markers_append_line(file, line);
        free(line);
    }
    cJSON_free(text);
}

void markers_record(uint64_t t_ns, const char *name, const char *event, cJSON *attrs,
                    const char *source, const char *t_from, long line_no, int with_counters)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        cJSON_Delete(attrs);
        return;
    }
    cJSON_AddNumberToObject(o, "t_ns", (double)t_ns);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "event", event);
    cJSON *tok = attrs ? cJSON_GetObjectItemCaseSensitive(attrs, "tokens") : NULL;
    if (cJSON_IsString(tok))
        cJSON_AddNumberToObject(o, "tokens", strtod(tok->valuestring, NULL));
    cJSON_AddItemToObject(o, "attrs", attrs ? attrs : cJSON_CreateObject());
    cJSON_AddStringToObject(o, "source", source);
    cJSON_AddStringToObject(o, "t_from", t_from);
    if (line_no > 0)
        cJSON_AddNumberToObject(o, "line", (double)line_no);
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    if (with_counters) {
        cJSON *c = cJSON_AddObjectToObject(o, "counters");
        if (c) {
            pid_t pids[256];
            int n = ps_run_pids(pids, 256);
            counters_add_json(c, pids, n);
        }
    }
    pthread_mutex_lock(&record_lock);
    markers_append_jsonl(RUN_PHASES, o);
    pthread_mutex_unlock(&record_lock);
    cJSON_Delete(o);
}

/* The text of a span for a log line: at most max bytes of it, NUL terminated. */
static const char *span_text(struct ps_mspan sp, char *buf, size_t size, size_t max)
{
    size_t n = sp.len < max ? sp.len : max;
    if (n >= size)
        n = size - 1;
    memcpy(buf, sp.p, n);
    buf[n] = 0;
    return buf;
}

static void log_bad_line(const struct ps_marker *m, long line_no)
{
    char what[96];
    switch (m->error) {
    case PS_MARKER_BAD_NAME:
        ps_log("markers line %ld: bad phase name '%s' (want [A-Za-z0-9_.-], at most %d bytes); skipped", line_no,
               span_text(m->bad, what, sizeof what, 80), PS_MARKER_NAME_MAX);
        break;
    case PS_MARKER_BAD_EVENT:
        ps_log("markers line %ld: '%s' is not followed by begin or end; skipped", line_no,
               span_text(m->bad, what, sizeof what, 80));
        break;
    case PS_MARKER_BAD_ATTR:
        ps_log("markers line %ld: bad attribute '%s' (want key=value); skipped", line_no,
               span_text(m->bad, what, sizeof what, 80));
        break;
    case PS_MARKER_BAD_T:
        ps_log("markers line %ld: t=%s is not a CLOCK_MONOTONIC time in ns; skipped", line_no,
               span_text(m->bad, what, sizeof what, 40));
        break;
    case PS_MARKER_BAD_TOKENS:
        ps_log("markers line %ld: tokens=%s is not a count; skipped", line_no, span_text(m->bad, what, sizeof what, 40));
        break;
    case PS_MARKER_OK:
        break;
    }
}

/* A t= off the run's clock: said with how far off it is, the boundary taken at read time. */
static void log_off_clock(uint64_t t, uint64_t run_start, uint64_t read_ns, long line_no)
{
    char how[128];
    const double year_s = 86400 * 365.25;
    if (t > read_ns) {
        double s = (double)(t - read_ns) / 1e9;
        if (s >= year_s)
            snprintf(how, sizeof how, "%.1f years after the line was read: a wall clock such as `date +%%s%%N`?",
                     s / year_s);
        else
            snprintf(how, sizeof how, "%.1f s after the line was read", s);
    } else {
        snprintf(how, sizeof how, "%.1f s before the run started", (double)(run_start - t) / 1e9);
    }
    ps_log("markers line %ld: t=%llu is not on the run's CLOCK_MONOTONIC (%s); the boundary is taken when the "
           "line was read",
           line_no, (unsigned long long)t, how);
}

/* Only the leader's watcher thread parses lines: one parse at a time, kept off its stack. */
static struct ps_marker parsed;

int markers_parse_line(const char *line, size_t len, long line_no, uint64_t read_ns)
{
    struct ps_marker *m = &parsed;
    int rc = ps_marker_parse(line, len, m);
    if (m->cut)
        ps_log("markers line %ld: longer than %d bytes, cut", line_no, PS_MARKER_LINE_MAX);
    if (rc < 0)
        log_bad_line(m, line_no);
    if (rc <= 0)
        return rc;

    char name[PS_MARKER_NAME_MAX + 1];
    span_text(m->name, name, sizeof name, PS_MARKER_NAME_MAX);
    uint64_t t_ns = read_ns;
    const char *t_source = "read";
    if (m->has_t) {
        uint64_t run_start = leader_run_start_ns();
        if (ps_marker_t_on_run_clock(m->t, run_start, read_ns)) {
            t_ns = m->t;
            t_source = "marker";
        } else {
            log_off_clock(m->t, run_start, read_ns, line_no);
        }
    }
    cJSON *attrs = cJSON_CreateObject();
    for (size_t i = 0; i < m->nattrs; i++) {
        char key[PS_MARKER_NAME_MAX + 1], value[PS_MARKER_LINE_MAX + 1];
        span_text(m->attrs[i].key, key, sizeof key, PS_MARKER_NAME_MAX);
        span_text(m->attrs[i].value, value, sizeof value, PS_MARKER_LINE_MAX);
        cJSON_DeleteItemFromObjectCaseSensitive(attrs, key); /* the last one counts */
        cJSON_AddStringToObject(attrs, key, value);
    }
    const char *source = "file";
    cJSON *via = cJSON_GetObjectItemCaseSensitive(attrs, "via");
    if (cJSON_IsString(via) && strcmp(via->valuestring, "api") == 0) {
        source = "api"; /* handed over by a follower process's perfscope_begin/end */
        cJSON_DeleteItemFromObjectCaseSensitive(attrs, "via");
    }
    markers_record(t_ns, name, m->end ? "end" : "begin", attrs, source, t_source, line_no, 1);
    return 1;
}

/* ---- the in-process API (perfscope.h) ---- */

static void api_boundary(const char *name, const char *event, long long tokens)
{
    if (!ps_active || !name)
        return;
    size_t len = strnlen(name, PS_MARKER_NAME_MAX + 1);
    if (!ps_marker_valid_name(name, len)) {
        ps_log("perfscope_%s: bad phase name '%.80s'; skipped", event, name);
        return;
    }
    uint64_t now = ps_now_ns();
    int saved = errno;
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    if (leader_is_us() || !ps_cfg.markers[0]) {
        cJSON *attrs = cJSON_CreateObject();
        if (tokens >= 0) {
            char v[32];
            snprintf(v, sizeof v, "%lld", tokens);
            cJSON_AddStringToObject(attrs, "tokens", v);
        }
        markers_record(now, name, event, attrs, "api", "api", 0, leader_is_us());
    } else {
        /* A follower hands the boundary to the leader through the markers file, with its own
         * time, so the leader reads the counters and keeps one ordered record. */
        char line[256];
        int n;
        if (tokens >= 0)
            n = snprintf(line, sizeof line, "%s %s t=%llu tokens=%lld via=api\n", name, event,
                         (unsigned long long)now, tokens);
        else
            n = snprintf(line, sizeof line, "%s %s t=%llu via=api\n", name, event, (unsigned long long)now);
        int fd = fds_run_open(ps_cfg.markers, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (write(fd, line, (size_t)n) != n)
                ps_log_once("api-write", "cannot append to %s", ps_cfg.markers);
            fds_run_close(fd);
        }
    }
    ps_xfsz_release(&x);
    errno = saved;
}

PS_API void perfscope_begin(const char *name)
{
    api_boundary(name, "begin", -1);
}

PS_API void perfscope_end(const char *name, long long tokens)
{
    api_boundary(name, "end", tokens);
}
