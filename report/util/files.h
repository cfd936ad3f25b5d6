/* files.h: the report's questions about files outside the run folder's formats: the path of a
 * tool installed beside this binary, a file's age. Outputs go through format/outfile.h, whole
 * files are read with format/'s readers (textfile_slurp, json_file_load). It must never write. */
#ifndef PERFSCOPE_REPORT_FILES_H
#define PERFSCOPE_REPORT_FILES_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* "<folder of /proc/self/exe>/<name>" into buf: 0, or -1 when it cannot be found. */
int path_beside_self(const char *name, char *buf, size_t size);

/* Modification time of path in ns, 0 when it cannot be read. */
long long file_mtime_ns(const char *path);

#endif
