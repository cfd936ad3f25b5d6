/* tests/dlbusy_unit.c LIBCTOR: drives preload/dlbusy.c (built from the shim's source) for
 * t_shim_dllock: the handler's answer before the loader's write lock is found (no libunwind
 * walk), after a search that finds no lock (an iterate that holds nothing: -1, a reason, still
 * no walk), after the real search (a walk), while this thread holds the lock (inside
 * dl_iterate_phdr's callback), while it holds it half-way (the lock word set, the owner not, as
 * between the two steps of taking or letting go: found by the tests' own ldlock.h), while
 * another thread holds it, while the loader says it is changing its list (its r_debug's state,
 * not this program's stale copy of _r_debug), and while a thread is busy (dlbusy_enter); a busy
 * thread going on only once a walk under way has ended (or its wait ran out), also in the child
 * of a fork made inside a walk; in a fork child, a walk that outlasts the busy thread's wait
 * with a lookup inside the C library: the busy thread gives up, waits for that lookup to end, so
 * does a second busy thread coming after, and the walk's next lookup is refused; and LIBCTOR
 * (dlbusy_ctor.c, dlopen'd) whose constructor's search, under the load lock, finds the lock.
 * Prints one "FAIL ..." line per broken rule and exits 1, else "ok N". */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dlbusy.h"
#include "ldlock.h"
#include "unitcheck.h"

extern ElfW(Dyn) _DYNAMIC[];

/* A walk allowed (entered, then left) or refused. */
static int may_walk(void)
{
    if (!dlbusy_handler_enter())
        return 0;
    dlbusy_handler_leave();
    return 1;
}

static int call_once_holding_nothing(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    struct dl_phdr_info info;
    memset(&info, 0, sizeof info);
    return cb(&info, sizeof info, data);
}

static int asked_inside;
static int ask_inside(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (void)data;
    asked_inside = may_walk();
    return 1;
}

static _Atomic int holding, release;
static int hold_until_released(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (void)data;
    atomic_store(&holding, 1);
    while (!atomic_load(&release))
        ;
    return 1;
}

static void *holder(void *arg)
{
    (void)arg;
    dl_iterate_phdr(hold_until_released, NULL);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* A walk (a handler's, played by a thread) that lasts 5 ms. */
static _Atomic int walk_begun, walk_done;
static void *short_walk(void *arg)
{
    (void)arg;
    int walks = dlbusy_handler_enter();
    atomic_store(&walk_begun, walks ? 1 : -1);
    sleep_ms(5);
    atomic_store(&walk_done, 1);
    if (walks)
        dlbusy_handler_leave();
    return NULL;
}

/* A busy thread (this one) beside a short walk: it goes on only once the walk has ended, or its
 * wait ran out (past 100 ms: a 5 ms walk ends first but on a machine stalled that long). */
static void busy_waits_for_short_walk(const char *where)
{
    atomic_store(&walk_begun, 0);
    atomic_store(&walk_done, 0);
    pthread_t w;
    CHECK(pthread_create(&w, NULL, short_walk, NULL) == 0, "no thread");
    while (!atomic_load(&walk_begun))
        sleep_ms(1);
    CHECK(atomic_load(&walk_begun) == 1, "%s: the short walk was refused", where);
    dlbusy_enter();
    CHECK(atomic_load(&walk_done) == 1 || dlbusy_given_up(), "%s: a busy thread went on while a walk was under way",
          where);
    dlbusy_leave();
    pthread_join(w, NULL);
}

/* fn run in a fork child (the give-up is for good, a fork inside a walk leaves the parent
 * walking): one check that it exited 0, its own checks printed there. */
static void in_child(int (*fn)(void), const char *what)
{
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        failed = 0; /* the parent's count came with the fork */
        int rc = fn();
        fflush(stdout);
        _exit(rc);
    }
    int status = -1;
    CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "%s: the checks in a fork child failed (status %d)", what, status);
}

/* A walk whose lookup is inside the C library when the busy thread's wait runs out (a walk
 * that is slow, not abandoned: its thread preempted or stopped). It lets the lookup go only once
 * the busy thread has given up and a second busy thread is on its way in (10 s at most each),
 * then asks for another lookup. */
static _Atomic int slow_begun, lookup_left, second_lookup, second_busy_entering, second_busy_saw;
static void *slow_walk(void *arg)
{
    (void)arg;
    int walks = dlbusy_handler_enter();
    int looks = walks ? dlbusy_lookup_enter() : 0;
    atomic_store(&slow_begun, looks == 1 ? 1 : -1);
    for (int i = 0; i < 10000 && !dlbusy_given_up(); i++)
        sleep_ms(1);
    for (int i = 0; i < 10000 && !atomic_load(&second_busy_entering); i++)
        sleep_ms(1);
    sleep_ms(20); /* time for a second busy thread that does not wait to go on */
    atomic_store(&lookup_left, 1);
    if (looks == 1)
        dlbusy_lookup_leave();
    int again = dlbusy_lookup_enter();
    if (again > 0)
        dlbusy_lookup_leave();
    atomic_store(&second_lookup, again);
    if (walks)
        dlbusy_handler_leave();
    return NULL;
}

/* A second busy thread, entering once the first has given up: it too waits for the lookup. */
static void *second_busy(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10000 && !dlbusy_given_up(); i++)
        sleep_ms(1);
    atomic_store(&second_busy_entering, 1);
    dlbusy_enter();
    atomic_store(&second_busy_saw, atomic_load(&lookup_left));
    dlbusy_leave();
    return NULL;
}

/* A program's handler nested in a walk forks (as pthread_atfork runs the shim's handlers): in
 * the child the walk goes on and ends, and a busy thread there still waits for a later walk.
 * Exit status 0 when every check held. */
static int after_fork_in_walk(void)
{
    dlbusy_after_fork_child();
    dlbusy_fork_done();
    dlbusy_handler_leave(); /* the walk the nested handler interrupted ends */
    busy_waits_for_short_walk("in the child of a fork inside a walk, a later walk");
    return failed ? 1 : 0;
}

static int fork_in_walk(void)
{
    CHECK(dlbusy_handler_enter(), "no walk allowed before the fork");
    dlbusy_fork_prepare();
    in_child(after_fork_in_walk, "a fork inside a walk");
    dlbusy_fork_done();
    dlbusy_handler_leave();
    return failed ? 1 : 0;
}

/* In a fork child (the give-up is for good): exit status 0 when every check held. */
static int give_up_in_child(void)
{
    pthread_t t;
    CHECK(pthread_create(&t, NULL, slow_walk, NULL) == 0, "no thread");
    while (!atomic_load(&slow_begun))
        sleep_ms(1);
    CHECK(atomic_load(&slow_begun) == 1, "the slow walk was refused a walk or a lookup");
    pthread_t c;
    CHECK(pthread_create(&c, NULL, second_busy, NULL) == 0, "no thread");
    dlbusy_enter();
    CHECK(dlbusy_given_up(), "a busy thread went on while a walk was under way, without giving up");
    CHECK(atomic_load(&lookup_left) == 1,
          "a busy thread gave up and went on while a walk's lookup was inside the C library");
    dlbusy_leave();
    pthread_join(t, NULL);
    pthread_join(c, NULL);
    CHECK(atomic_load(&second_busy_saw) == 1,
          "a second busy thread, after the first gave up, went on while a walk's lookup was inside the C library");
    CHECK(atomic_load(&second_lookup) == -1, "a walk's lookup allowed after the busy thread gave up (%d)",
          atomic_load(&second_lookup));
    CHECK(!may_walk(), "a walk allowed after the busy thread gave up");
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("FAIL usage: dlbusy_unit LIBCTOR\n");
        return 1;
    }
    char why[256] = "";
    CHECK(!may_walk(), "a walk allowed before the loader's lock was looked for");
    CHECK(dlbusy_find_loader_lock(call_once_holding_nothing, why, sizeof why) == -1,
          "a search whose iterate holds no lock found one");
    CHECK(why[0] != 0, "a failed search gave no reason");
    CHECK(!may_walk(), "a walk allowed after a failed search");
    CHECK(dlbusy_find_loader_lock(dl_iterate_phdr, why, sizeof why) == 0, "the loader's write lock not found: %s", why);
    CHECK(may_walk(), "no walk allowed with the lock found and free");
    asked_inside = -1;
    dl_iterate_phdr(ask_inside, NULL);
    CHECK(asked_inside == 0, "a walk allowed while this thread holds the loader's lock (%d)", asked_inside);
    pthread_mutex_t *lock = ldlock_find();
    CHECK(lock != NULL, "the tests' own search found no loader lock");
    if (lock) {
        pthread_mutex_lock(lock);
        int owner = lock->__data.__owner;
        lock->__data.__owner = 0;
        CHECK(!may_walk(), "a walk allowed while this thread holds the loader's lock half-way (owner not set)");
        lock->__data.__owner = owner;
        pthread_mutex_unlock(lock);
        CHECK(may_walk(), "no walk allowed once the half-way hold was let go");
    }
    pthread_t t;
    CHECK(pthread_create(&t, NULL, holder, NULL) == 0, "no thread");
    while (!atomic_load(&holding))
        ;
    CHECK(!may_walk(), "a walk allowed while another thread holds the loader's lock");
    atomic_store(&release, 1);
    pthread_join(t, NULL);
    CHECK(may_walk(), "no walk allowed once the other thread let the lock go");
    /* This program uses _r_debug itself, so it holds a copy of it (a copy relocation) that the
     * loader never updates: the state the handler reads is the loader's own (DT_DEBUG's). */
    struct r_debug *live = NULL;
    for (ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_DEBUG)
            live = (struct r_debug *)d->d_un.d_ptr;
    CHECK(live != NULL && live != &_r_debug, "no DT_DEBUG apart from this program's copy of _r_debug");
    if (live && live != &_r_debug) {
        _r_debug.r_state = RT_ADD;
        CHECK(may_walk(), "no walk allowed with this program's stale copy of _r_debug saying RT_ADD");
        _r_debug.r_state = RT_CONSISTENT;
        live->r_state = RT_ADD;
        CHECK(!may_walk(), "a walk allowed while the loader adds an object (r_debug's state RT_ADD)");
        live->r_state = RT_CONSISTENT;
        CHECK(may_walk(), "no walk allowed once r_debug's state was consistent again");
    }
    dlbusy_enter();
    CHECK(!may_walk(), "a walk allowed while a thread is busy");
    dlbusy_leave();
    CHECK(may_walk(), "no walk allowed once the busy thread left");
    in_child(fork_in_walk, "the fork-inside-a-walk checks");
    in_child(give_up_in_child, "the give-up checks");
    busy_waits_for_short_walk("a short walk");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL, "cannot dlopen %s: %s", argv[1], dlerror());
    if (lib) {
        int *rc = dlsym(lib, "dlbusy_ctor_rc");
        const char *why = dlsym(lib, "dlbusy_ctor_why");
        CHECK(rc && why && *rc == 0, "the search from a constructor inside dlopen: %d (%s)", rc ? *rc : -3,
              why ? why : "?");
    }
    return unit_done();
}
