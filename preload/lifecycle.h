/* lifecycle.h: what the wrappers in lifecycle.c call in the rest of the shim, and back. */
#ifndef PERFSCOPE_LIFECYCLE_H
#define PERFSCOPE_LIFECYCLE_H

#include <pthread.h>

/* shim.c */
void shim_after_fork_child(void);
void shim_finish(const char *status);
void shim_finish_signal_safe(const char *status);
void shim_resume_after_failed_exec(void);
int shim_is_fatal_signal(int sig);
void shim_install_fatal(int sig);

/* lifecycle.c */
int lifecycle_exit_code(int *code);
void lifecycle_own_fatal(int sig);
void lifecycle_forget_fatal(int sig);
int lifecycle_fd_is_ours(int fd);

#endif
