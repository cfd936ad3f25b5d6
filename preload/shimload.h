/* shimload.h: the shim's own dlopens (libunwind, NVML, zlib), kept out of the way of a target's
 * calls that name descriptor numbers.
 *
 * The loader opens a library (and /etc/ld.so.cache, which it maps) at the lowest free descriptor
 * numbers, reads it, maps it from there and closes it: a target's dup2 onto such a number
 * meanwhile had it map the target's file ("file too short", a segment it could not map, or a
 * SIGBUS later, in the loader itself or in the code mapped), and its close of that number after
 * closed the loader's. A target's dup2, dup3 or close_range (fds.c) is announced before a load
 * under way is looked at, and a load waits for calls announced, both sequentially consistent:
 * either the call sees the load and waits for it, or the load sees the call and waits for it.
 * Neither waits past SHIMLOAD_HOLD_NS from the load's start, in all: a load that waits for the
 * loader's lock (a target's dlopen under way: a library's constructor, which may itself make such
 * a call) is not held for, and the race is then left to chance. Never from a signal handler. */
#ifndef PERFSCOPE_SHIMLOAD_H
#define PERFSCOPE_SHIMLOAD_H

/* dlopen(name, flags), held apart from the target's number calls as above. errno and dlerror()
 * are as dlopen left them. */
void *shimload_open(const char *name, int flags);

/* Around a target's call that names a descriptor number (dup2, dup3, close_range: fds.c): waits
 * while one of the shim's loads is under way (at most SHIMLOAD_HOLD_NS from its start). errno is
 * left alone. */
void shimload_number_call_begin(void);
void shimload_number_call_end(void);

/* In a fork child (its only thread): a load another thread of the parent had under way is not
 * the child's to wait for. */
void shimload_after_fork_child(void);

#endif
