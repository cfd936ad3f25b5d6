/* textfile.h: bounded line reading for the text formats perfscope reads (maps snapshots,
 * JSON Lines). A hostile file may hold one endless line or NUL bytes: lines are cut at a fixed
 * cap and the rest skipped, so memory never grows with the file. Never aborts. */
#ifndef PERFSCOPE_TEXTFILE_H
#define PERFSCOPE_TEXTFILE_H

#include <stddef.h>
#include <stdio.h>

struct textfile {
    FILE *f;
    char *buf;          /* current line, NUL terminated, without its '\n' */
    size_t cap;         /* longest line kept, in bytes */
    size_t lineno;      /* 1-based number of the current line */
    int too_long;       /* the current line was longer than cap and has been cut */
    int no_newline;     /* the current line ends the file without a '\n' (a cut write?) */
    int has_nul;        /* the current line holds a NUL byte (binary data) */
    int error;          /* errno of a read error, 0 if none */
};

/* Opens a regular file for line reading; lines longer than cap bytes are cut. Returns 0, or -1
 * with a one-line message naming the file in err. */
int textfile_open(struct textfile *tf, const char *path, size_t cap, char *err, size_t errlen);

/* The next line (its length in *len), or NULL at the end of the file or on a read error
 * (tf->error then says which). */
char *textfile_next(struct textfile *tf, size_t *len);

void textfile_close(struct textfile *tf);

/* snprintf into err, naming the file: "<path>: <what>". Shared by every reader so messages
 * read alike. */
void reader_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
