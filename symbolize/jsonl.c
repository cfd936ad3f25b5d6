/* jsonl.c: JSON Lines reader (see jsonl.h). It must never keep more than one line in memory and
 * never parse JSON by hand: cJSON does every parse. */
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
    int read_error = tf.error;
    textfile_close(&tf);
    if (read_error) {
        reader_error(err, errlen, path, "read error: %s", strerror(read_error));
        return -1;
    }
    return 0;
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
