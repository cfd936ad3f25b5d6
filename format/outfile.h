/* outfile.h: every file the symbolizer writes into the run folder goes through here: written
 * under a temporary name beside the target, then renamed over it, so a reader never sees half a
 * file and a failure (disk full, a kill) never leaves one behind under the real name. */
#ifndef PERFSCOPE_OUTFILE_H
#define PERFSCOPE_OUTFILE_H

#include <stdio.h>

struct outfile {
    FILE *f;
    char path[4096];
    char tmp[4096 + 32];
};

/* Opens "<dir>/<name>.tmp.<pid>" for writing. Returns 0, or -1 with "<path>: <why>" in err. */
int outfile_open(struct outfile *o, const char *dir, const char *name, char *err, size_t errlen);

/* Flushes, closes and renames over the real name. Returns 0, or -1 with the message in err (the
 * temporary file is removed). */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Closes and removes the temporary file (after a failure). */
void outfile_abort(struct outfile *o);

#endif
