/* fatal.h: the signal-safe way out, for _exit, _Exit and the fatal signals. Where a fatal
 * signal's disposition is the default, the shim's handler stands in for SIG_DFL: flush, status,
 * exit line, then SIG_DFL restored and the signal raised again, so the target ends exactly as it
 * would have. Nothing here may allocate, use stdio or wait without a bound: it runs in signal
 * handlers, on small alternate stacks, and in an _exit called from a handler that interrupted
 * malloc. It never keeps a disposition the target asked for: the target's handler wins (a
 * one-shot handler runs behind a trampoline that only does the kernel's reset itself). */
#ifndef PERFSCOPE_FATAL_H
#define PERFSCOPE_FATAL_H

#include <signal.h>

/* At start: stand in for SIG_DFL of every listed fatal signal whose disposition is SIG_DFL. */
void fatal_install_all(void);
/* sig is one of the fatal signals the shim stands in for when their disposition is SIG_DFL. */
int fatal_signal_listed(int sig);
/* Stands in for sig's SIG_DFL, if that is its disposition now (the target reset it to SIG_DFL). */
void fatal_install(int sig);
/* The same after the target's own SIG_DFL act went to the kernel: a query then reads act back
 * (its flags and mask), not a bare SIG_DFL. */
void fatal_install_keeping(int sig, const struct sigaction *act);
/* Whether the shim stands in for sig's SIG_DFL now (the sigaction wrapper asks). */
int fatal_owns(int sig);
/* Whether the sigaction wrapper hands sig's call to fatal_sigaction: we stand in for its
 * SIG_DFL, or the target has (or asks for) a one-shot (SA_RESETHAND) handler for it. */
int fatal_wants(int sig, const struct sigaction *act);
/* sigaction for a signal fatal_wants: the target sees and sets its own disposition (SIG_DFL is
 * kept as ours; a one-shot handler is installed behind ours, which does the reset to our
 * SIG_DFL stand-in itself; any other is installed and the signal is the target's from then on). */
int fatal_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* Before seccomp strict mode: the target's own dispositions back, ours gone. */
void fatal_step_aside(void);
/* "SIGTERM" for SIGTERM; "signal" for one without a name here. Async-signal-safe. */
const char *fatal_signal_name(int sig);
/* The flush, status and exit line of the way out (async-signal-safe, every wait bounded).
 * shim_finish_signal_safe decides whether it runs. */
void fatal_finish(const char *status);
/* In a fork child: the child's own first fatal signal gets its own way out. */
void fatal_after_fork(void);

#endif
