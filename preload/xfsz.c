/* xfsz.c: SIGXFSZ held around the shim's writes on the target's threads (xfsz.h). Only
 * async-signal-safe calls: the fatal-signal path holds it too. */
#include "xfsz.h"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include "interpose.h"
#include "sigmask.h"

/* A write of ours past the target's RLIMIT_FSIZE raises SIGXFSZ on the writing thread, whose
 * default kills the target. Around our writes on its threads the signal is held, and one that
 * our write raised is taken back. Async-signal-safe. */
void ps_xfsz_hold(struct ps_xfsz *x)
{
    sigset_t xfsz, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    ps_real_pthread_sigmask(SIG_BLOCK, &xfsz, &x->saved);
    x->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    x->unheld = 0;
}

void ps_xfsz_hold_alone(struct ps_xfsz *x)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur == RLIM_INFINITY) {
        x->unheld = 1;
        return;
    }
    ps_xfsz_hold(x);
}

void ps_xfsz_release(const struct ps_xfsz *x)
{
    if (x->unheld)
        return;
    sigset_t xfsz, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    if (!x->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
        struct timespec zero = { 0, 0 };
        ps_real_sigtimedwait(&xfsz, NULL, &zero);
    }
    ps_real_pthread_sigmask(SIG_SETMASK, &x->saved, NULL);
}
