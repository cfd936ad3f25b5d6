/* markers.c: the marker protocol (docs/formats.md). Parses the lines the target's scripts append to
 * the markers file, and records every phase boundary, from the file or from the in-process API
 * (include/perfscope.h), as one line of phases.jsonl with the counters read at that instant.
 * A bad line is logged with its number and skipped; nothing here may ever stop the target. */
#include "markers.h"

#include <ctype.h>
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

static int valid_name(const char *s, size_t len)
{
    if (len == 0 || len > PS_MARKER_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
            return 0;
    return 1;
}

static int parse_u64(const char *s, unsigned long long *out)
{
    if (!*s || !isdigit((unsigned char)*s))
        return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return 0;
    *out = v;
    return 1;
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
    int rc = write(fd, text, len) == (ssize_t)len && linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : -1;
    ps_real_close(fd);
    return rc;
}

static void append_line(const char *name, const char *text)
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
    /* One write per line, so concurrent appenders never interleave inside a line. */
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
        append_line(file, line);
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

int markers_parse_line(const char *line, size_t len, long line_no, uint64_t read_ns)
{
    char buf[PS_MARKER_LINE_MAX + 1];
    if (len > PS_MARKER_LINE_MAX) {
        ps_log("markers line %ld: longer than %d bytes, cut", line_no, PS_MARKER_LINE_MAX);
        len = PS_MARKER_LINE_MAX;
    }
    memcpy(buf, line, len);
    buf[len] = 0;
    while (len && (buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
        buf[--len] = 0;
    char *p = buf;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '#')
        return 0;

    char *save = NULL;
    char *name = strtok_r(p, " \t", &save);
    char *event = strtok_r(NULL, " \t", &save);
    if (!valid_name(name, strlen(name))) {
        ps_log("markers line %ld: bad phase name '%.80s' (want [A-Za-z0-9_.-], at most %d bytes); skipped",
               line_no, name, PS_MARKER_NAME_MAX);
        return -1;
    }
    if (!event || (strcmp(event, "begin") != 0 && strcmp(event, "end") != 0)) {
        ps_log("markers line %ld: '%.80s' is not followed by begin or end; skipped", line_no, name);
        return -1;
    }
    cJSON *attrs = cJSON_CreateObject();
    uint64_t t_ns = read_ns;
    const char *t_source = "read";
    char *kv;
    while ((kv = strtok_r(NULL, " \t", &save)) != NULL) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !valid_name(kv, (size_t)(eq - kv)) || !eq[1]) {
            ps_log("markers line %ld: bad attribute '%.80s' (want key=value); skipped", line_no, kv);
            cJSON_Delete(attrs);
            return -1;
        }
        *eq = 0;
        const char *key = kv, *value = eq + 1;
        unsigned long long v;
        if (strcmp(key, "t") == 0) {
            if (!parse_u64(value, &v)) {
                ps_log("markers line %ld: t=%.40s is not a CLOCK_MONOTONIC time in ns; skipped", line_no, value);
                cJSON_Delete(attrs);
                return -1;
            }
            t_ns = v;
            t_source = "marker";
            continue;
        }
        if (strcmp(key, "tokens") == 0 && !parse_u64(value, &v)) {
            ps_log("markers line %ld: tokens=%.40s is not a count; skipped", line_no, value);
            cJSON_Delete(attrs);
            return -1;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(attrs, key);
        cJSON_AddStringToObject(attrs, key, value);
    }
    const char *source = "file";
    cJSON *via = cJSON_GetObjectItemCaseSensitive(attrs, "via");
    if (cJSON_IsString(via) && strcmp(via->valuestring, "api") == 0) {
        source = "api"; /* handed over by a follower process's perfscope_begin/end */
        cJSON_DeleteItemFromObjectCaseSensitive(attrs, "via");
    }
    markers_record(t_ns, name, event, attrs, source, t_source, line_no, 1);
    return 1;
}

/* ---- the in-process API (perfscope.h) ---- */

static void api_boundary(const char *name, const char *event, long long tokens)
{
    if (!ps_active || !name)
        return;
    size_t len = strnlen(name, PS_MARKER_NAME_MAX + 1);
    if (!valid_name(name, len)) {
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
