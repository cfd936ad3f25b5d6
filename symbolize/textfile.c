/* textfile.c: bounded line reader shared by the text readers (maps.c, jsonl.c). It must never
 * let a line grow past its cap, never stop at a NUL byte silently, and never read a non-regular
 * file (a FIFO or /dev/zero would hang or never end). */
#include "textfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int textfile_open(struct textfile *tf, const char *path, size_t cap, char *err, size_t errlen)
{
    memset(tf, 0, sizeof *tf);
    FILE *f = fopen(path, "re");
    if (!f) {
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        reader_error(err, errlen, path, "not a regular file");
        fclose(f);
        return -1;
    }
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
