/* folded.c: stacks.folded, line by line (folded.h), through textfile.c's bounded reader. It must
 * never split a frame anywhere but at ';' (the writer turns a ';' inside a name into ':'), never
 * take a count that is not all digits, and never read past FOLDED_MAX_LINE. */
#include "folded.h"
#include "textfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int folded_read(const char *path, folded_line_fn fn, void *ctx, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 1;
    struct textfile tf;
    if (textfile_open(&tf, path, FOLDED_MAX_LINE, err, errlen) != 0)
        return -1;
    char **frames = malloc(FOLDED_MAX_FRAMES * sizeof *frames);
    if (!frames) {
        textfile_close(&tf);
        reader_error(err, errlen, path, "out of memory");
        return -1;
    }
    int rc = 0;
    char *line;
    size_t len;
    while (rc == 0 && (line = textfile_next(&tf, &len)) != NULL) {
        const char *what = NULL;
        len = text_rstrip(line);
        if (len == 0)
            continue;
        char *sp = strrchr(line, ' ');
        const char *num = sp ? sp + 1 : NULL;
        uint64_t count = 0;
        if (tf.too_long)
            what = "longer than the longest line read";
        else if (tf.has_nul)
            what = "holds a NUL byte";
        else if (!num || text_dec(&num, &count) != 0 || *num)
            what = "no sample count at its end";
        if (!what) {
            *sp = '\0';
            size_t n = 0;
            char *group = line, *p = strchr(line, ';');
            if (!p)
                what = "no frame after the phase group";
            while (!what && p) {
                *p++ = '\0';
                if (n == FOLDED_MAX_FRAMES) {
                    what = "more frames than a stack can have";
                    break;
                }
                frames[n++] = p;
                p = strchr(p, ';');
            }
            for (size_t i = 0; !what && i < n; i++)
                if (!frames[i][0])
                    what = "an empty frame";
            if (!what && !group[0])
                what = "an empty phase group";
            if (!what && fn(ctx, group, frames, n, count) != 0) {
                reader_error(err, errlen, path, "stopped at line %zu", tf.lineno);
                rc = -1;
            }
        }
        if (what) {
            reader_error(err, errlen, path, "line %zu: %s", tf.lineno, what);
            rc = -1;
        }
    }
    free(frames);
    if (rc != 0) {
        textfile_close(&tf);
        return -1;
    }
    return textfile_finish(&tf, path, 0, err, errlen);
}
