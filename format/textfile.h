/* textfile.h: bounded reading for the text formats perfscope reads: line by line (maps
 * snapshots, JSON Lines, perf maps, logs) or a whole small file (JSON documents, a target's
 * output). A hostile file may hold one endless line or NUL bytes: lines are cut at a fixed cap
 * and the rest skipped, whole files are refused past theirs, so memory never grows with the file.
 * Only regular files are read: a FIFO or a device in a file's place is refused, never waited on.
 * Never aborts. */
#ifndef PERFSCOPE_TEXTFILE_H
#define PERFSCOPE_TEXTFILE_H

#include <stddef.h>
#include <stdint.h>
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

/* Closes tf after its last line: 0, or -1 with "<path>: out of memory" (when oom, the caller's
 * own failure while reading) or "<path>: read error: <why>" in err. */
int textfile_finish(struct textfile *tf, const char *path, int oom, char *err, size_t errlen);

/* Opens path with fopen's mode ("re", "rbe") and refuses what is not a regular file; *st (may be
 * NULL) receives its fstat. The stream, or NULL with "<path>: cannot open: <why>" or
 * "<path>: not a regular file" in err. */
struct stat;
FILE *reader_fopen(const char *path, const char *mode, struct stat *st, char *err, size_t errlen);

/* Reads the whole of a regular file of at most cap bytes into a new NUL-terminated buffer
 * (*len bytes, which may include NUL bytes), to its end whatever size it had when opened: a file
 * that grows past cap meanwhile is refused too. 0; 1 when the file does not exist (only if
 * missing_ok); -1 with "<path>: <why>" in err (cannot open, not a regular file, empty, too
 * large, read error, out of memory). The caller frees *buf. */
int textfile_slurp(const char *path, size_t cap, int missing_ok, char **buf, size_t *len,
                   char *err, size_t errlen);

/* ---- tokens of the line formats (maps, perf maps, file names) ----
 * Each reads at *p and, on success, moves *p past what it read; on failure *p is unchanged. */

/* Hex digits (either case, no "0x") into *v: 0, or -1 when there is none or more than 16. */
int text_hex(const char **p, uint64_t *v);

/* Decimal digits into *v: 0, or -1 when there is none or the number passes UINT64_MAX. */
int text_dec(const char **p, uint64_t *v);

/* One or more blanks (' ', '\t'): 0, or -1 when *p is not at a blank. */
int text_blanks(const char **p);

/* Cuts the blanks (' ', '\t', '\r') at the end of s, in place; the new length. */
size_t text_rstrip(char *s);

/* snprintf into err, naming the file: "<path>: <what>". Shared by every reader so messages
 * read alike. */
void reader_error(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
