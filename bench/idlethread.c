/* idlethread.c: a preload library for make bench's fork+exec rows, no part of perfscope. Every
 * process it is loaded into keeps one thread of its own that does nothing (it waits on a condition
 * variable), as the shim keeps its writer thread: started at the process's start and in a fork
 * child, stopped and joined at exit (an exec ends it as it ends any thread). What a shell loop of
 * /bin/true pays with it over without is what one idle thread per process costs on the machine,
 * whatever the thread does: the floor of a design that keeps a thread in every process. It must
 * never print or change what the program does. */
#define _GNU_SOURCE
#include <pthread.h>

static pthread_t idle;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stop, running;

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
    stop = 0;
    running = pthread_create(&idle, NULL, idle_main, NULL) == 0;
}

static void after_fork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);
    idle_start(); /* the parent's thread does not exist here */
}

__attribute__((constructor)) static void idle_begin(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
    idle_start();
}

__attribute__((destructor)) static void idle_end(void)
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
