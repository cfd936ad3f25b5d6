/* xfsz.h: SIGXFSZ held around the shim's writes on the target's threads. A write of ours past
 * the target's RLIMIT_FSIZE must never kill the target (SIGXFSZ's default) nor leave it a signal
 * it did not cause. Async-signal-safe: the fatal path uses it. Never changes the target's mask
 * beyond the pair of calls. */
#ifndef PERFSCOPE_XFSZ_H
#define PERFSCOPE_XFSZ_H

#include <signal.h>

/* Around the shim's writes on the target's threads: SIGXFSZ held, and taken back if our write
 * raised it (async-signal-safe). */
struct ps_xfsz {
    sigset_t saved;
    int was_pending;
    int unheld; /* ps_xfsz_hold_alone found no limit: nothing was changed */
};
void ps_xfsz_hold(struct ps_xfsz *x);
/* The same where the calling thread is the process's only one (a fork child's handler): with
 * RLIMIT_FSIZE unlimited no write of ours can raise SIGXFSZ and no other thread can lower the
 * limit meanwhile, so nothing is held (one getrlimit instead of four mask calls). */
void ps_xfsz_hold_alone(struct ps_xfsz *x);
void ps_xfsz_release(const struct ps_xfsz *x);

#endif
