/* filemap.h: a read-only mapping of a file read once from start to end, its pages brought in
 * ahead of the reader by a thread of its own and given back behind it by that thread (off the
 * reader's: unmapping was 1-1.4 ms of its 25 on a 54 MB file), that survives the file
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
#include <stddef.h>
#include <stdint.h>

/* Bytes populated at a time, and how far ahead of the reader the populating goes: the mapping
 * holds about four times this much of the file at most (a step being populated, one ahead of
 * the reader, up to two behind it not given back yet while the thread lags, and the reader's
 * block): the symbolizer's peak RSS on the bench's 54 MB file 29-31 MB, where the reader gave
 * every page back itself 28-32. */
#define FILEMAP_STEP ((size_t)4 << 20)

/* An open mapping. It must not move between filemap_open and filemap_close: its thread holds
 * a pointer to it. */
struct filemap {
    const unsigned char *base;
    size_t len;
    int slot;             /* the handler's registry entry, -1 when none */
    pthread_t ahead;
    int ahead_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t populated, consumed; /* under mu */
    size_t released;      /* given back below this: under mu when there is a thread */
    int stop, waiting;
    int ahead_done;       /* under mu: the thread has left its loop and gives nothing back */
};

/* Maps the first len bytes of fd (read-only, private) and starts populating them ahead. 0, or -1
 * (nothing to undo: the caller reads the file as before). */
int filemap_open(struct filemap *m, int fd, size_t len);

/* The reader is done with everything before offset upto: the populating may go on past it, and
 * the pages wholly before it are given back. */
void filemap_consumed(struct filemap *m, size_t upto);

/* Whether a page past the file's end was touched since it was mapped (the file was cut short, or
 * a read of it failed): what was read there and after it is zeros. */
int filemap_shrank(const struct filemap *m);

/* Stops the populating thread and unmaps. */
void filemap_close(struct filemap *m);

#endif
