/* shimload.h: the shim's own dlopens (libunwind, NVML, zlib), kept out of the way of a target's
 * calls that name descriptor numbers.
 *
 * The loader opens a library (and /etc/ld.so.cache, which it maps) at the lowest free descriptor
 * numbers, reads it, maps it from there and closes it: a target's dup2 onto such a number
 * meanwhile had it map the target's file ("file too short", a segment it could not map, or a
 * SIGBUS later, in the loader itself or in the code mapped), and its close of that number after
 * closed the loader's. So a load is one of the shim's allocations (fdgate.h), on whatever thread
 * it runs: it waits for the target's calls under way and they wait for it, never past
 * FDGATE_HOLD_NS; a load that waits for the loader's lock (a target's dlopen under way: a
 * library's constructor, which may itself make such a call) is then not held for, and the race
 * is left to chance. Never from a signal handler. */
#ifndef PERFSCOPE_SHIMLOAD_H
#define PERFSCOPE_SHIMLOAD_H

/* dlopen(name, flags), held apart from the target's number calls as above. errno and dlerror()
 * are as dlopen left them. */
void *shimload_open(const char *name, int flags);

#endif
