/* jsonl.h: JSON reading for every tool, on top of the bounded readers of textfile.h; cJSON does
 * every parse.
 *   - JSON Lines (phases.jsonl, counters.jsonl, procs.jsonl): a broken line is counted and
 *     skipped, never fatal: the shim appends these files while it runs and a kill may cut the
 *     last line.
 *   - whole JSON documents (meta.json, profile.json, run.json, cases, noise and matrix files):
 *     THE reader is json_file_load; it never reads past its size cap and never hands back a
 *     cut document, binary data or a document with anything after it. */
#ifndef PERFSCOPE_JSONL_H
#define PERFSCOPE_JSONL_H

#include <stddef.h>
#include <cjson/cJSON.h>

#define JSONL_LINE_CAP (1u << 20) /* a counters line with many zones and GPUs is a few KiB */
#define JSON_FILE_MAX_BYTES (64u << 20) /* a whole document (run.json, a noise or matrix file) */

struct jsonl_stats {
    size_t lines;    /* lines read, blank ones included */
    size_t objects;  /* lines that parsed as a JSON object and were given to the callback */
    size_t bad;      /* lines skipped: not JSON, not an object, over the cap, NUL bytes */
    size_t first_bad_line; /* 1-based number of the first bad line, 0 if none */
};

/* Called with each object (owned by the reader: detach what you keep) and its line number;
 * returns nonzero to stop. */
typedef int (*jsonl_fn)(cJSON *obj, size_t lineno, void *arg);

/* Returns 0, or -1 with "<path>: <what>" in err when the file cannot be read at all. */
int jsonl_foreach(const char *path, jsonl_fn fn, void *arg, struct jsonl_stats *st, char *err,
                  size_t errlen);

/* Reads a file that must hold one JSON object (blanks around it allowed) of at most cap bytes:
 * 0 with the object in *out (the caller deletes it); 1 when the file does not exist (only if
 * missing_ok); -1 with one line "<path>: <what is wrong>" in err: cannot open, not a regular
 * file (a FIFO is refused without waiting), empty, too large, NUL bytes, cut short, a syntax
 * error, another JSON value than an object, trailing garbage. */
int json_file_load(const char *path, size_t cap, int missing_ok, cJSON **out, char *err,
                   size_t errlen);

/* Number from a member that may be a JSON number or a decimal string (the markers' attributes
 * are strings): 0 with *v set, -1 if absent or not a whole non-negative number. Strings keep
 * full 64-bit precision; JSON numbers are exact up to 2^53. */
int json_u64(const cJSON *obj, const char *key, unsigned long long *v);

#endif
