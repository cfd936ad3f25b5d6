/* files.h: file helpers shared by the report's writers: output written through a temporary name
 * and a rename (a reader never sees half a file, a failure never leaves one), the path of a tool
 * installed beside this binary, a file's age. Whole files are read with symbolize/'s readers
 * (textfile_slurp, json_file_load). */
#ifndef PERFSCOPE_REPORT_FILES_H
#define PERFSCOPE_REPORT_FILES_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Writes data to path.tmp.<pid>, then renames it to path. 0, or -1 with "<path>: <why>". */
int write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen);

/* cJSON_Print of obj, written as above with a final newline. */
int write_json_atomic(const char *path, const cJSON *obj, char *err, size_t errlen);

/* "<folder of /proc/self/exe>/<name>" into buf: 0, or -1 when it cannot be found. */
int path_beside_self(const char *name, char *buf, size_t size);

/* Modification time of path in ns, 0 when it cannot be read. */
long long file_mtime_ns(const char *path);

#endif
