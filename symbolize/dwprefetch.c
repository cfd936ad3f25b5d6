/* dwprefetch.c: the prefetching thread (see dwprefetch.h). It must never touch anything but its
 * own items and the dw_files it opens. */
#include "dwprefetch.h"
#include "dwsym.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char deleted_suffix[] = " (deleted)";

/* Opens one file as symtab.c would (the same checks that can be made without the run's
 * context), symbols and DWARF loaded. */
static struct dw_file *open_one(const char *path, uint64_t inode)
{
    size_t len = strlen(path), sl = sizeof deleted_suffix - 1;
    if (len > sl && strcmp(path + len - sl, deleted_suffix) == 0)
        return NULL;
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (inode && (uint64_t)sb.st_ino != inode))
        return NULL;
    struct dw_file *dw;
    char why[160];
    if (dw_open(path, &dw, why, sizeof why) != 0)
        return NULL;
    dw_prepare(dw);
    return dw;
}

static void *run(void *arg)
{
    struct dwprefetch *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (d->next == d->n && !d->stop)
            pthread_cond_wait(&d->cv, &d->mu);
        if (d->next == d->n)
            break;
        size_t i = d->next++;
        if (d->items[i].state != DWP_QUEUED)
            continue; /* a taker opens it itself */
        d->items[i].state = DWP_OPENING;
        char *path = d->items[i].path;
        uint64_t inode = d->items[i].inode;
        pthread_mutex_unlock(&d->mu);
        struct dw_file *dw = open_one(path, inode);
        pthread_mutex_lock(&d->mu);
        d->items[i].dw = dw;
        d->items[i].state = DWP_DONE;
        d->opened += dw != NULL;
        pthread_cond_broadcast(&d->done_cv);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int dwprefetch_start(struct dwprefetch *d)
{
    memset(d, 0, sizeof *d);
    if (pthread_mutex_init(&d->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&d->cv, NULL) != 0) {
        pthread_mutex_destroy(&d->mu);
        return -1;
    }
    if (pthread_cond_init(&d->done_cv, NULL) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        return -1;
    }
    if (pthread_create(&d->th, NULL, run, d) != 0) {
        pthread_cond_destroy(&d->done_cv);
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        return -1;
    }
    d->started = 1;
    return 0;
}

void dwprefetch_want(struct dwprefetch *d, const char *path, uint64_t inode)
{
    if (!d->started || d->stop)
        return;
    for (size_t i = 0; i < d->n; i++) /* a run maps a few dozen files: a scan will do */
        if (d->items[i].inode == inode && strcmp(d->items[i].path, path) == 0)
            return;
    char *copy = strdup(path);
    if (!copy)
        return;
    pthread_mutex_lock(&d->mu);
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        struct dwp_item *v = realloc(d->items, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&d->mu);
            free(copy);
            return;
        }
        d->items = v;
        d->cap = cap;
    }
    d->items[d->n++] = (struct dwp_item){copy, inode, NULL, DWP_QUEUED};
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

void dwprefetch_finish(struct dwprefetch *d)
{
    if (!d->started || d->stop)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->th, NULL);
}

struct dw_file *dwprefetch_take(struct dwprefetch *d, const char *path, uint64_t inode)
{
    if (!d || !d->started)
        return NULL;
    struct dw_file *dw = NULL;
    pthread_mutex_lock(&d->mu);
    for (size_t i = 0; i < d->n; i++) {
        struct dwp_item *it = &d->items[i];
        if (it->inode != inode || strcmp(it->path, path) != 0)
            continue;
        if (it->state == DWP_QUEUED) {
            it->state = DWP_DONE; /* not started: the caller opens it, the thread never will */
            break;
        }
        while (d->items[i].state == DWP_OPENING) /* by index: a want may move the items */
            pthread_cond_wait(&d->done_cv, &d->mu);
        dw = d->items[i].dw;
        d->items[i].dw = NULL;
        break;
    }
    pthread_mutex_unlock(&d->mu);
    return dw;
}

void dwprefetch_free(struct dwprefetch *d)
{
    if (!d->started)
        return;
    dwprefetch_finish(d);
    for (size_t i = 0; i < d->n; i++) {
        dw_close(d->items[i].dw);
        free(d->items[i].path);
    }
    free(d->items);
    pthread_cond_destroy(&d->done_cv);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    memset(d, 0, sizeof *d);
}
