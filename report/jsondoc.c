/* jsondoc.c: whole-file JSON documents (see jsondoc.h). It must never read past the size cap,
 * never hand back a half-parsed document, and never print: errors go into err. */
#include "jsondoc.h"
#include "textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cJSON *jsondoc_load(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO in the file's place must not hang the open. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        reader_error(err, errlen, path, "not a regular file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        reader_error(err, errlen, path, "cannot open: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    cJSON *doc = NULL;
    char *buf = NULL;
    if ((unsigned long long)st.st_size > JSONDOC_MAX_BYTES) {
        reader_error(err, errlen, path, "too large (%lld bytes, at most %u)",
                     (long long)st.st_size, JSONDOC_MAX_BYTES);
        goto out;
    }
    /* Read to the end (the size may have changed since fstat), one byte past the cap at most. */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    buf = malloc(cap + 1);
    if (!buf) {
        reader_error(err, errlen, path, "out of memory");
        goto out;
    }
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (ferror(f)) {
            reader_error(err, errlen, path, "read error");
            goto out;
        }
        if (got == 0 || n < cap)
            break;
        if (cap > JSONDOC_MAX_BYTES) {
            reader_error(err, errlen, path, "too large (grew past %u bytes)", JSONDOC_MAX_BYTES);
            goto out;
        }
        size_t ncap = cap * 2 > (size_t)JSONDOC_MAX_BYTES + 1 ? (size_t)JSONDOC_MAX_BYTES + 1 : cap * 2;
        char *nb = realloc(buf, ncap + 1);
        if (!nb) {
            reader_error(err, errlen, path, "out of memory");
            goto out;
        }
        buf = nb;
        cap = ncap;
    }
    buf[n] = '\0';
    size_t lead = strspn(buf, " \t\r\n");
    if (n == 0 || lead == n) {
        reader_error(err, errlen, path, "empty file");
        goto out;
    }
    if (memchr(buf, '\0', n)) {
        reader_error(err, errlen, path, "holds NUL bytes (binary data, not JSON)");
        goto out;
    }
    const char *end = NULL;
    /* The length counts the terminating NUL so that cJSON can check nothing follows. */
    doc = cJSON_ParseWithLengthOpts(buf, n + 1, &end, 1);
    if (!doc) {
        size_t at = end && end >= buf && end <= buf + n ? (size_t)(end - buf) : n;
        const char *eptr = cJSON_GetErrorPtr();
        if (eptr && eptr >= buf && eptr <= buf + n)
            at = (size_t)(eptr - buf);
        size_t tail = at + strspn(buf + at, " \t\r\n");
        if (tail >= n)
            reader_error(err, errlen, path, "cut short: the JSON document ends early (%zu bytes)", n);
        else
            reader_error(err, errlen, path, "not valid JSON (at byte %zu of %zu)", at, n);
    }
out:
    free(buf);
    fclose(f);
    return doc;
}

cJSON *json_get(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    cJSON *found = NULL;
    for (cJSON *c = obj->child; c; c = c->next)
        if (c->string && strcmp(c->string, key) == 0)
            found = c;
    return found;
}

/* cJSON's members: the head's prev is the last member (whose next is NULL); every other
 * member's prev is the one before it. */
static int is_head(const cJSON *c)
{
    return c->prev == NULL || c->prev->next == NULL;
}

int json_first_of_name(const cJSON *item)
{
    if (!item->string || is_head(item))
        return 1;
    for (const cJSON *c = item->prev;; c = c->prev) {
        if (c->string && strcmp(c->string, item->string) == 0)
            return 0;
        if (is_head(c))
            return 1;
    }
}

int json_truthy(const cJSON *item)
{
    if (!item || cJSON_IsNull(item) || cJSON_IsFalse(item))
        return 0;
    if (cJSON_IsTrue(item))
        return 1;
    if (cJSON_IsNumber(item))
        return item->valuedouble != 0;
    if (cJSON_IsString(item))
        return item->valuestring && item->valuestring[0];
    if (cJSON_IsArray(item) || cJSON_IsObject(item))
        return item->child != NULL;
    return 1;
}

cJSON *json_number(double v)
{
    char buf[40];
    if (!isfinite(v))
        return cJSON_CreateNull();
    if (v == trunc(v) && fabs(v) < 9007199254740992.0) { /* 2^53: every whole number exact */
        snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    }
    return cJSON_CreateRaw(buf);
}
