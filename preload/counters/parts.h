/* parts.h: the three counter sources behind counters.c (RAPL, NVML, RssAnon). Private to
 * preload/counters/. counters.c serialises every call under one lock, so the parts keep plain
 * static state. None of them may abort, print, or keep a descriptor of its own open between calls
 * (NVML, once loaded, keeps its device files open inside the library until the process ends);
 * the files read every period go through the shim's kept descriptors (fdcache.h, their one
 * owner, above the target's numbers; tests/counters_unit.c reads them plainly). */
#ifndef PERFSCOPE_COUNTERS_PARTS_H
#define PERFSCOPE_COUNTERS_PARTS_H

#include <stddef.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

void rapl_open(const char *root);
void rapl_add_json(cJSON *obj);
void rapl_close(void);

/* Loads and initialises NVML once per process; a second call with the same path reuses it. */
void nvml_open(const char *path);
void nvml_add_json(cJSON *obj, const pid_t *pids, int npids);

void mem_add_json(cJSON *obj, const pid_t *pids, int npids);

/* Small helpers shared by the parts (counters.c). */
/* 1 when pids[i] already appeared in pids[0..i-1]: duplicates are counted once. */
int counters_pid_seen_before(const pid_t *pids, int i);
/* Reads the whole small file at path into buf (NUL terminated, trailing newline cut), through
 * fdcache_read. Returns the length, or -1 with errno set; *op names the call that failed. */
ssize_t counters_read_small(const char *path, char *buf, size_t size, const char **op);
/* close and dlclose for the parts' own descriptors and library: the shim exports wrappers of
 * both for the target (fds.c, interpose.c), and the shim's own calls must never pass through
 * them. These go past any wrapper, the same whether the parts are built into the shim or alone
 * (tests/counters_unit.c): the close system call itself, the C library's dlclose. */
int counters_sys_close(int fd);
int counters_sys_dlclose(void *handle);
/* The run's pids as NVML lists them (hostpids.c): pids[i] or, inside a container, its host pid
 * from the run folder's RUN_HOSTPIDS; the first min(npids, max) into out, their count returned. */
int counters_host_pids(const pid_t *pids, int npids, pid_t *out, int max);
/* "text: strerror(err)" into buf, thread-safe. */
void counters_errtext(char *buf, size_t size, const char *what, int err);
/* ps_log once per key for the life of the process, with its own table of keys (per zone, per
 * GPU and field) so as not to fill the shim's; when the table is full, nothing more is logged. */
void counters_log_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
