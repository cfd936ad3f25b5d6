/* spill.h: the samples as collecting counted them, 16 bytes each, in an unnamed temporary file
 * in the run folder (O_TMPFILE: it never has a name, and goes when closed), so that writers that
 * go through the samples again in time order (replay.c) read 16 bytes a sample instead of the
 * sample file's record, and look no stack up: each holds its time, thread and the stack cache
 * entry (or call tree node) collecting found. Memory stays flat: one buffer a reader or writer.
 *
 * It must never be trusted past what was written in full: a failed write or a short read makes it
 * unusable (ok 0), and the caller reads the sample files again instead. */
#ifndef PERFSCOPE_SPILL_H
#define PERFSCOPE_SPILL_H

#include <stddef.h>
#include <stdint.h>

struct spill_rec {
    uint64_t time_ns;
    uint32_t thread;
    uint32_t ref;       /* SPILL_NODE | node, or a stack cache entry (offset + 1) */
};

#define SPILL_NODE 0x80000000u
#define SPILL_BATCH 4096 /* records a buffer holds */

struct spill {
    int fd;             /* -1: none */
    int ok;             /* every record so far written, or buffered */
    uint64_t n;         /* records added */
    struct spill_rec *buf;
    size_t nbuf;
};

/* Opens the file in dir: 0, or -1 (no spill: s->ok 0, everything else still works). */
int spill_open(struct spill *s, const char *dir);

/* One record: a stack cache entry (is_node 0, id > 0) or a call tree node (is_node 1); an id
 * of SPILL_NODE or more makes the spill unusable. */
void spill_add(struct spill *s, uint64_t time_ns, uint32_t thread, int is_node, uint32_t id);

/* Writes out what is buffered; after it the spill is read-only. */
void spill_flush(struct spill *s);

/* Records [first, first + n) into out (n <= SPILL_BATCH): 0, or -1 when they cannot be read in
 * full. Read-only: readers may read side by side. */
int spill_read(const struct spill *s, uint64_t first, size_t n, struct spill_rec *out);

void spill_close(struct spill *s);

#endif
