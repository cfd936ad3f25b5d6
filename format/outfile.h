/* outfile.h: every file a tool writes goes through here: written
 * under a temporary name beside the target, then renamed over it, so a reader never sees half a
 * file and a failure (disk full, a kill) never leaves one behind under the real name; nor, where
 * the tool leaves SIGINT, SIGTERM and SIGHUP at their default, under the temporary one. Every
 * tool's outputs (the symbolizer's and the report's) are written through here. */
#ifndef PERFSCOPE_OUTFILE_H
#define PERFSCOPE_OUTFILE_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* The stream's buffer: big writes (trace.json runs to hundreds of MB) in few system calls,
 * not one per 4 KiB. */
#define OUTFILE_BUFFER_BYTES (1u << 20)

struct outfile {
    FILE *f;
    char *buf;         /* OUTFILE_BUFFER_BYTES, or NULL (stdio's own buffer then) */
    char path[4096];
    char tmp[4096 + 32];
    int derived;       /* a run folder's output the symbolizer rebuilds (outfile_open): put in
                        * place by exchange (outfile.c) */
    int slot;          /* its entry in the list a kill removes temporary files by (outfile.c), or -1 */
};

/* Opens "<path>.tmp.<pid>" for writing. Returns 0, or -1 with "<path>: <why>" in err. */
int outfile_open_path(struct outfile *o, const char *path, char *err, size_t errlen);

/* Opens "<path>.tmp.<pid>" for reading and writing with no stdio buffer, for a library that
 * writes through the descriptor (fileno(o->f)); committed and renamed as any other. */
int outfile_open_update(struct outfile *o, const char *path, char *err, size_t errlen);

/* Opens "<dir>/<name>.tmp.<pid>" for writing: an output derived from the run folder <dir>, which
 * running the symbolizer again rebuilds (outfile_commit exchanges it with the old one). Returns
 * 0, or -1 with "<path>: <why>" in err. */
int outfile_open(struct outfile *o, const char *dir, const char *name, char *err, size_t errlen);

/* Flushes, closes and puts the file in place of the real name (renamed there; a derived output
 * is exchanged with the regular file there, which is then removed: outfile.c). Returns 0, or -1
 * with the message in err (the temporary file is removed). */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Closes and removes the temporary file (after a failure). */
void outfile_abort(struct outfile *o);

/* mkdir -p: path and every missing folder above it, made with mode. 0 when path is a folder at
 * the end, else -1 (errno). */
int outfile_make_dirs(const char *path, unsigned mode);

/* The whole of data written to path this way: 0, or -1 with "<path>: <why>" in err. */
int outfile_write_all(const char *path, const char *data, size_t len, char *err, size_t errlen);

/* The text of obj as every JSON output of the tools is written (cJSON_Print):
 * malloc'd (NULL: out of memory), with bytes that are not UTF-8 made '?' (utf8_fix_text: names
 * read from a run folder may hold any bytes, and cJSON passes them through). */
char *outfile_json_text(const cJSON *obj);

/* outfile_json_text of obj, written as above with a final newline. */
int outfile_write_json(const char *path, const cJSON *obj, char *err, size_t errlen);

#endif
