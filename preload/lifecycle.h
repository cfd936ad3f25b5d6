/* lifecycle.h: what the wrappers in lifecycle.c call in the rest of the shim, and back. */
#ifndef PERFSCOPE_LIFECYCLE_H
#define PERFSCOPE_LIFECYCLE_H

#include <pthread.h>

/* lifecycle.c */
int lifecycle_exit_code(int *code);
int lifecycle_fd_is_ours(int fd);

#endif
