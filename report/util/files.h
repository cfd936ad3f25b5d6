/* files.h: the report's questions about files outside the run folder's formats: the path of a
 * tool installed beside this binary, the shim's, a file's age. Outputs go through format/outfile.h, whole
 * files are read with format/'s readers (textfile_slurp, json_file_load). It must never write. */
#ifndef PERFSCOPE_REPORT_FILES_H
#define PERFSCOPE_REPORT_FILES_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* "<folder of /proc/self/exe>/<name>" into buf: 0, or -1 when it cannot be found. */
int path_beside_self(const char *name, char *buf, size_t size);

/* The shim every tool that runs a process under it uses, as an absolute real path (a cd in the
 * command cannot lose it): $PERFSCOPE_SHIM when set (absolute and readable, else -1), else
 * libperfscope.so beside this binary (a build tree), else ../lib/perfscope/libperfscope.so from
 * it (an installed PREFIX/bin/perfscope; make install puts the shim there); 0, or -2 for none. */
#define SHIM_FILE_NAME "libperfscope.so"
int shim_path(char *buf, size_t size);

/* Modification time of path in ns, 0 when it cannot be read. */
long long file_mtime_ns(const char *path);

#endif
