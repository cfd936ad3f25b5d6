/* interpose.h: the C library functions the shim wraps, so it follows the target through its
 * life (interpose.c; the descriptor calls are fds.c's), and the C library's own functions behind
 * them for the shim's own use: the shim's internal calls must never pass through its own
 * wrappers. A wrapper must never change, towards the target, what the function it wraps does:
 * same results, same errno, same signals. */
#ifndef PERFSCOPE_INTERPOSE_H
#define PERFSCOPE_INTERPOSE_H

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

/* In a wrapper: real_<name>, the C library's function behind it, resolved on first use. */
#define PS_RESOLVE(name)                                                           \
    do {                                                                           \
        if (!real_##name)                                                          \
            *(void **)&real_##name = dlsym(RTLD_NEXT, #name);                       \
    } while (0)

/* The C library's own functions behind the wrappers (ps_real_close is in fds.h). Resolved on
 * first use. */
int ps_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int ps_real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* A thread of the shim's own (the writer, the watcher): created with every signal blocked from
 * its first instruction (the attribute's mask, else the creator's blocked around the create), so
 * no signal of the target's is ever delivered on it and it makes no mask call of its own. */
int ps_start_shim_thread(pthread_t *t, void *(*fn)(void *));
/* The same, the thread pinned to the creator's current CPU until it calls ps_shim_thread_unpin
 * (pin->cpu -1 when it was not: one allowed CPU, a real-time creator, a refusal). A short
 * process's thread that never leaves its creator's CPU costs it less: on this 2-CPU VM the
 * shim's cost per fork+exec fell 0.77 -> 0.63 ms of CPU (docs/shim.md, "What a process pays"). */
struct ps_thread_pin {
    int cpu;
    cpu_set_t allowed; /* the creator's CPUs, given back by the unpin */
};
int ps_start_shim_thread_near(pthread_t *t, void *(*fn)(void *), struct ps_thread_pin *pin);
/* On the pinned thread itself: back to the creator's CPUs, unless its mask was changed since
 * (a mask someone set to exactly the pinned CPU cannot be told from the pin, and is widened). A
 * real-time thread the target later runs busy on that CPU keeps the pinned thread from running
 * until it yields the CPU: the start checks only the creator's policy. */
void ps_shim_thread_unpin(struct ps_thread_pin *pin);
/* Joins a thread of the shim's own on a way out, waiting for it at most 2 s: one held by
 * something the leaving thread itself holds (the loader's lock, in a library's constructor that
 * exits or execs) never ends. Past that, perfscope.log says so once and the way out goes on
 * without it (the kernel ends it with the process). */
int ps_join_shim_thread(pthread_t t, const char *what);
/* In a fork child, before it starts threads: the parent's shim threads not yet running are not
 * the child's (the clone() wrapper waits for those). */
void ps_shim_threads_after_fork_child(void);
/* Inside the handler's guard, as the target's calls are: a sample never unwinds in the loader. */
int ps_real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
/* For xfsz.c: takes back a SIGXFSZ that our own write raised. */
int ps_real_sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout);
/* The C library's prctl (the wrapper watches PR_SET_SECCOMP). */
int ps_real_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);

/* Set on the thread inside daemon(), whose parent ends by an _exit the shim cannot see. */
int interpose_in_daemon(void);

/* The status the target asked for through exit() or by returning from main; 0 when neither
 * happened (yet). */
int interpose_exit_code(int *code);

#endif
