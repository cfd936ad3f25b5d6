/* tests/dlbusy_unit.c LIBCTOR: drives preload/dlbusy.c (built from the shim's source) for
 * t_shim_dllock: the handler's answer before the loader's write lock is found (no libunwind
 * walk), after a search that finds no lock (an iterate that holds nothing: -1, a reason, still
 * no walk), after the real search (a walk), while this thread holds the lock (inside
 * dl_iterate_phdr's callback), while it holds it half-way (the lock word set, the owner not, as
 * between the two steps of taking or letting go: found by the tests' own ldlock.h), while
 * another thread holds it, and while a thread is busy (dlbusy_enter); and LIBCTOR
 * (dlbusy_ctor.c, dlopen'd) whose constructor's search, under the load lock, finds the lock.
 * Prints one "FAIL ..." line per broken rule and exits 1, else "ok N". */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "dlbusy.h"
#include "ldlock.h"
#include "unitcheck.h"

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
    dlbusy_enter();
    CHECK(!may_walk(), "a walk allowed while a thread is busy");
    dlbusy_leave();
    CHECK(may_walk(), "no walk allowed once the busy thread left");
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
