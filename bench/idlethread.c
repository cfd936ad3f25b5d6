/* idlethread.c: a preload library for make bench's fork+exec rows, no part of perfscope. Every
 * process it is loaded into keeps one thread of its own that does nothing (it waits on a condition
 * variable), as the shim keeps its writer thread: started at the process's start and in a fork
 * child, stopped and joined at exit and before an exec (execve, which bash calls: the shim stops
 * its writer there too; started again if the exec fails). What a shell loop of /bin/true pays
 * with it over without is what one idle thread per process costs on the machine, whatever the
 * thread does. It must never print or change what the program does.
 * For taking that cost apart by hand (not used by make bench): IDLETHREAD_ONLY=NAME starts the
 * thread only in programs of that name (bash: the shell and its fork children; true: /bin/true),
 * IDLETHREAD_PIN=1 pins it to the CPU its creator runs on. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_t idle;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stop, running, wanted;

static void *idle_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!stop)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void idle_start(void)
{
    if (!wanted)
        return;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    const char *pin = getenv("IDLETHREAD_PIN");
    if (pin && strcmp(pin, "1") == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        int cpu = sched_getcpu();
        if (cpu >= 0) {
            CPU_SET(cpu, &one);
            pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        }
    }
    stop = 0;
    running = pthread_create(&idle, &attr, idle_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

static void idle_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&mu);
    stop = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(idle, NULL);
    running = 0;
}

static void after_fork_child(void)
{
    running = 0; /* the parent's thread does not exist here */
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);
    idle_start();
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    static int (*real)(const char *, char *const[], char *const[]);
    if (!real)
        real = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    idle_stop();
    int rc = real(path, argv, envp);
    int saved = errno;
    idle_start();
    errno = saved;
    return rc;
}

__attribute__((constructor)) static void idle_begin(void)
{
    const char *only = getenv("IDLETHREAD_ONLY");
    wanted = !only || strcmp(only, program_invocation_short_name) == 0;
    pthread_atfork(NULL, NULL, after_fork_child);
    idle_start();
}

__attribute__((destructor)) static void idle_end(void)
{
    idle_stop();
}
