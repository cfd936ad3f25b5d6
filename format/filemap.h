/* filemap.h: a read-only mapping of a file read once from start to end, its pages brought in
 * ahead of the reader by a thread of its own and given back behind it, that survives the file
 * being cut short meanwhile by another process. samples.c reads big sample files through it:
 * read() copied every byte once more (a fifth of the symbolizer's CPU on a 52 MB file), and a
 * page faulted in by the reader itself cost it more than a page populated in bulk elsewhere.
 *
 * A file cut while mapped makes the kernel send SIGBUS to whoever touches a page past the new
 * end. The handler filemap installs (once, chaining to any other) maps zeros over the rest of
 * such a mapping and marks it shrunk: the access that faulted reads zeros, and the reader, which
 * asks filemap_shrank after each record, stops there. A SIGBUS for any other address goes on as
 * before (the previous handler, or the default action). */
#ifndef PERFSCOPE_FILEMAP_H
#define PERFSCOPE_FILEMAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes populated at a time, and how far ahead of the reader the populating stays: what the
 * mapping holds in memory at most is about twice this much. */
#define FILEMAP_STEP ((size_t)4 << 20)

struct filemap {
    const unsigned char *base;
    size_t len;
    _Atomic int shrank;   /* set by the SIGBUS handler */
    int slot;             /* the handler's registry entry */
    pthread_t ahead;
    int ahead_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t populated, consumed, released; /* under mu (released: the reader's alone) */
    int stop, waiting;
};

/* Maps the first len bytes of fd (read-only, private) and starts populating them ahead. 0, or -1
 * (nothing to undo: the caller reads the file as before). */
int filemap_open(struct filemap *m, int fd, size_t len);

/* The reader is done with everything before offset upto: the populating may go on past it, and
 * the pages wholly before it are given back. */
void filemap_consumed(struct filemap *m, size_t upto);

/* Whether the file was found cut short while mapped (a page past its new end was touched). */
static inline int filemap_shrank(struct filemap *m)
{
    return atomic_load_explicit(&m->shrank, memory_order_acquire);
}

/* Stops the populating thread and unmaps. */
void filemap_close(struct filemap *m);

#endif
