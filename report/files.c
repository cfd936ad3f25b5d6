/* files.c: the report's file helpers (files.h). It must never leave a partial output file behind
 * (temporary name, then rename; the temporary is removed on any failure) and never read an
 * unbounded or non-regular file into memory. */
#include "files.h"
#include "textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        reader_error(err, errlen, path, "path too long");
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        reader_error(err, errlen, path, "cannot write: %s", strerror(errno));
        return -1;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            reader_error(err, errlen, path, "cannot write: %s", n < 0 ? strerror(errno) : "short write");
            close(fd);
            unlink(tmp);
            return -1;
        }
        done += (size_t)n;
    }
    if (close(fd) != 0) {
        reader_error(err, errlen, path, "cannot write: %s", strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        reader_error(err, errlen, path, "cannot rename into place: %s", strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int write_json_atomic(const char *path, const cJSON *obj, char *err, size_t errlen)
{
    char *text = cJSON_Print(obj);
    if (!text) {
        reader_error(err, errlen, path, "out of memory");
        return -1;
    }
    size_t n = strlen(text);
    char *withnl = realloc(text, n + 2);
    if (!withnl) {
        free(text);
        reader_error(err, errlen, path, "out of memory");
        return -1;
    }
    withnl[n] = '\n';
    withnl[n + 1] = '\0';
    int rc = write_file_atomic(path, withnl, n + 1, err, errlen);
    free(withnl);
    return rc;
}

int read_small_file(const char *path, size_t cap, int missing_ok, char **buf, size_t *len,
                    char *err, size_t errlen)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT && missing_ok)
            return 1;
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        reader_error(err, errlen, path, "not a regular file");
        close(fd);
        return -1;
    }
    if (st.st_size == 0) {
        reader_error(err, errlen, path, "empty file");
        close(fd);
        return -1;
    }
    if ((unsigned long long)st.st_size > cap) {
        reader_error(err, errlen, path, "too large (%lld bytes, at most %zu)", (long long)st.st_size,
                     cap);
        close(fd);
        return -1;
    }
    size_t want = (size_t)st.st_size;
    char *b = malloc(want + 1);
    if (!b) {
        reader_error(err, errlen, path, "out of memory");
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, b + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            reader_error(err, errlen, path, "read error: %s", strerror(errno));
            free(b);
            close(fd);
            return -1;
        }
        if (n == 0)
            break; /* shrank while read: use what is there */
        got += (size_t)n;
    }
    close(fd);
    b[got] = '\0';
    *buf = b;
    *len = got;
    return 0;
}

int read_json_file(const char *path, size_t cap, int missing_ok, cJSON **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = read_small_file(path, cap, missing_ok, &buf, &len, err, errlen);
    if (rc != 0)
        return rc;
    const char *end = NULL;
    cJSON *obj = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!cJSON_IsObject(obj)) {
        size_t at = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
        size_t used = len; /* without trailing blanks: an error at the last byte is a cut */
        while (used && (buf[used - 1] == ' ' || buf[used - 1] == '\n' || buf[used - 1] == '\r' ||
                        buf[used - 1] == '\t'))
            used--;
        reader_error(err, errlen, path, "not a JSON object (%s at byte %zu of %zu)",
                     obj ? "another JSON value" : at + 1 >= used ? "cut short" : "syntax error", at,
                     len);
        cJSON_Delete(obj);
        free(buf);
        return -1;
    }
    size_t at = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : len;
    while (at < len && (buf[at] == ' ' || buf[at] == '\n' || buf[at] == '\r' || buf[at] == '\t'))
        at++;
    if (at < len) {
        reader_error(err, errlen, path, "trailing garbage after the JSON object (byte %zu of %zu)",
                     at, len);
        cJSON_Delete(obj);
        free(buf);
        return -1;
    }
    free(buf);
    *out = obj;
    return 0;
}

int path_beside_self(const char *name, char *buf, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if (snprintf(buf, size, "%s/%s", self, name) >= (int)size)
        return -1;
    return 0;
}

long long file_mtime_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}
