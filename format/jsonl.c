/* jsonl.c: JSON Lines and whole JSON documents (see jsonl.h). It must never keep more than one
 * line of a JSON Lines file in memory, never read a document past its cap, and never parse JSON
 * by hand: cJSON does every parse. */
#include "jsonl.h"
#include "textfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int jsonl_foreach(const char *path, jsonl_fn fn, void *arg, struct jsonl_stats *st, char *err,
                  size_t errlen)
{
    struct jsonl_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    struct textfile tf;
    if (textfile_open(&tf, path, JSONL_LINE_CAP, err, errlen) != 0)
        return -1;
    char *line;
    size_t len;
    while ((line = textfile_next(&tf, &len)) != NULL) {
        st->lines++;
        if (line[strspn(line, " \t\r")] == '\0')
            continue;
        cJSON *obj = NULL;
        if (!tf.too_long && !tf.has_nul)
            obj = cJSON_ParseWithLength(line, len);
        if (!cJSON_IsObject(obj)) {
            cJSON_Delete(obj);
            st->bad++;
            if (!st->first_bad_line)
                st->first_bad_line = tf.lineno;
            continue;
        }
        st->objects++;
        int stop = fn(obj, tf.lineno, arg);
        cJSON_Delete(obj);
        if (stop)
            break;
    }
    return textfile_finish(&tf, path, 0, err, errlen);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int json_file_load(const char *path, size_t cap, int missing_ok, cJSON **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = textfile_slurp(path, cap, missing_ok, &buf, &len, err, errlen);
    if (rc != 0)
        return rc;
    size_t used = len; /* without trailing blanks: an error at the last byte is a cut */
    while (used && is_blank(buf[used - 1]))
        used--;
    cJSON *obj = NULL;
    const char *end = NULL;
    if (used == 0) {
        reader_error(err, errlen, path, "empty file");
    } else if (memchr(buf, '\0', len)) {
        reader_error(err, errlen, path, "not a JSON object (NUL bytes: binary data)");
    } else if (!cJSON_IsObject(obj = cJSON_ParseWithLengthOpts(buf, len, &end, 0))) {
        size_t at = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
        reader_error(err, errlen, path, "not a JSON object (%s at byte %zu of %zu)",
                     obj ? "another JSON value" : at + 1 >= used ? "cut short" : "syntax error", at,
                     len);
    } else {
        size_t at = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : len;
        while (at < len && is_blank(buf[at]))
            at++;
        if (at < len)
            reader_error(err, errlen, path,
                         "trailing garbage after the JSON object (byte %zu of %zu)", at, len);
        else
            *out = obj;
    }
    if (!*out)
        cJSON_Delete(obj);
    free(buf);
    return *out ? 0 : -1;
}

int json_u64(const cJSON *obj, const char *key, unsigned long long *v)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (!(d >= 0) || d >= 18446744073709551616.0 || d != floor(d))
            return -1;
        *v = (unsigned long long)d;
        return 0;
    }
    if (cJSON_IsString(item) && item->valuestring) {
        const char *s = item->valuestring;
        if (*s < '0' || *s > '9')
            return -1;
        errno = 0;
        char *end;
        unsigned long long x = strtoull(s, &end, 10);
        if (errno || *end != '\0')
            return -1;
        *v = x;
        return 0;
    }
    return -1;
}
