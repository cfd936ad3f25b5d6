/* files.c: the report's file helpers (files.h). It must never leave a partial output file behind
 * (temporary name, then rename; the temporary is removed on any failure). */
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
