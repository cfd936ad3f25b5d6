/* textfile.c: bounded reading shared by the text readers (maps.c, perfmap.c, jsonl.c, the
 * report's). It must never let a line grow past its cap, never read a whole file past its cap,
 * never stop at a NUL byte silently, and never read a non-regular file (a FIFO or /dev/zero would
 * hang or never end). */
#include "textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void reader_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    int n = snprintf(err, errlen, "%s: ", path);
    if (n < 0 || (size_t)n >= errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* One line, whatever the path holds. */
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

FILE *reader_fopen(const char *path, const char *mode, struct stat *stp, char *err, size_t errlen)
{
    /* Opened without blocking and checked before any stdio: a plain fopen of a FIFO waits in
     * open() for a writer that never comes (any reader of a run folder, or of a perf map in
     * /tmp that another user planted, hung there). Readers only read (mode "r..."). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat local, *st = stp ? stp : &local;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        reader_error(err, errlen, path, "not a regular file");
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 ? NULL : fdopen(fd, mode);
    if (!f) {
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    return f;
}

int text_hex(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    int digits = 0;
    for (;; s++, digits++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            break;
        if (digits >= 16)
            return -1; /* more than 64 bits */
        x = (x << 4) | (uint64_t)d;
    }
    if (digits == 0)
        return -1;
    *p = s;
    *v = x;
    return 0;
}

int text_dec(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (x > (UINT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *p = s;
    *v = x;
    return 0;
}

int text_blanks(const char **p)
{
    const char *s = *p;
    if (*s != ' ' && *s != '\t')
        return -1;
    while (*s == ' ' || *s == '\t')
        s++;
    *p = s;
    return 0;
}

size_t text_rstrip(char *s)
{
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        s[--len] = '\0';
    return len;
}

int textfile_open(struct textfile *tf, const char *path, size_t cap, char *err, size_t errlen)
{
    memset(tf, 0, sizeof *tf);
    FILE *f = reader_fopen(path, "re", NULL, err, errlen);
    if (!f)
        return -1;
    tf->buf = malloc(cap + 1);
    if (!tf->buf) {
        reader_error(err, errlen, path, "out of memory");
        fclose(f);
        return -1;
    }
    tf->f = f;
    tf->cap = cap;
    return 0;
}

char *textfile_next(struct textfile *tf, size_t *len)
{
    size_t n = 0;
    int c = EOF;
    tf->too_long = tf->no_newline = tf->has_nul = 0;
    while ((c = getc_unlocked(tf->f)) != EOF && c != '\n') {
        if (c == '\0')
            tf->has_nul = 1;
        if (n < tf->cap)
            tf->buf[n++] = (char)c;
        else
            tf->too_long = 1;
    }
    if (c == EOF) {
        if (ferror(tf->f)) {
            tf->error = errno ? errno : EIO;
            return NULL;
        }
        if (n == 0 && !tf->too_long)
            return NULL;
        tf->no_newline = 1;
    }
    tf->buf[n] = '\0';
    tf->lineno++;
    if (len)
        *len = n;
    return tf->buf;
}

void textfile_close(struct textfile *tf)
{
    if (tf->f)
        fclose(tf->f);
    free(tf->buf);
    memset(tf, 0, sizeof *tf);
}

int textfile_finish(struct textfile *tf, const char *path, int oom, char *err, size_t errlen)
{
    int read_error = tf->error;
    textfile_close(tf);
    if (oom)
        reader_error(err, errlen, path, "out of memory");
    else if (read_error)
        reader_error(err, errlen, path, "read error: %s", strerror(read_error));
    return oom || read_error ? -1 : 0;
}

int textfile_slurp(const char *path, size_t cap, int missing_ok, char **buf, size_t *len,
                   char *err, size_t errlen)
{
    *buf = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO in the file's place must not hang the open. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT && missing_ok)
            return 1;
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    char *b = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        reader_error(err, errlen, path, "not a regular file");
        goto fail;
    }
    if ((unsigned long long)st.st_size > cap) {
        reader_error(err, errlen, path, "too large (%lld bytes, at most %zu)", (long long)st.st_size,
                     cap);
        goto fail;
    }
    /* Read to the end (the size may have changed since fstat), one byte past the cap at most. */
    size_t size = (size_t)st.st_size + 1, n = 0;
    b = malloc(size + 1);
    if (!b) {
        reader_error(err, errlen, path, "out of memory");
        goto fail;
    }
    for (;;) {
        if (n == size) {
            if (size > cap) {
                reader_error(err, errlen, path, "too large (grew past %zu bytes)", cap);
                goto fail;
            }
            size_t nsize = size > cap / 2 ? cap + 1 : size * 2;
            char *nb = realloc(b, nsize + 1);
            if (!nb) {
                reader_error(err, errlen, path, "out of memory");
                goto fail;
            }
            b = nb;
            size = nsize;
        }
        ssize_t got = read(fd, b + n, size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            reader_error(err, errlen, path, "read error: %s", strerror(errno));
            goto fail;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n == 0) {
        reader_error(err, errlen, path, "empty file");
        goto fail;
    }
    close(fd);
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
fail:
    free(b);
    close(fd);
    return -1;
}
