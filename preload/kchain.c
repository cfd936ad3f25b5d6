/* kchain.c: the kernel's call-chain records into the sample rings (kchain.h). Every length in a
 * record is checked against the buffer before it is read: a torn or foreign record ends the
 * drain of that buffer (its records are counted lost), it is never walked past. */
#include "kchain.h"

#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

size_t kchain_map_len(long page)
{
    return (size_t)(KCHAIN_DATA_PAGES + 1) * (size_t)page;
}

/* Copies len bytes at offset off (counted from the start of the data, wrapping) out of the
 * buffer's data area of `size` bytes (a power of two). */
static void copy_out(void *to, const unsigned char *data, uint64_t size, uint64_t off, size_t len)
{
    uint64_t at = off & (size - 1), first = size - at < len ? size - at : len;
    memcpy(to, data + at, first);
    if (first < len)
        memcpy((unsigned char *)to + first, data, len - first);
}

static const unsigned char *data_of(const struct ps_thread *t, uint64_t *size)
{
    const struct perf_event_mmap_page *pg = t->perf_rb;
    uint64_t page = t->perf_rb_len / (KCHAIN_DATA_PAGES + 1);
    *size = pg->data_size ? pg->data_size : (uint64_t)KCHAIN_DATA_PAGES * page;
    return (const unsigned char *)t->perf_rb + (pg->data_offset ? pg->data_offset : page);
}

int kchain_pending(const struct ps_thread *t)
{
    if (!t->kchain || !t->perf_rb)
        return 0;
    const struct perf_event_mmap_page *pg = t->perf_rb;
    return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) != pg->data_tail;
}

/* One PERF_RECORD_SAMPLE (sample_type TIME | CALLCHAIN): u64 time, u64 nr, u64 ips[nr]. */
#define KCHAIN_REC_MAX 65536 /* a record's size is a u16 */

int kchain_pump(struct ps_thread *t)
{
    if (!t->kchain || !t->perf_rb || !t->ring)
        return 0;
    struct perf_event_mmap_page *pg = t->perf_rb;
    uint64_t size;
    const unsigned char *data = data_of(t, &size);
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;
    static uint64_t rec[KCHAIN_REC_MAX / 8]; /* one pump at a time: the io lock */
    uint32_t max = (uint32_t)ps_cfg.max_frames;
    int left = 0;
    while (tail < head) {
        struct perf_event_header h;
        if (head - tail < sizeof h)
            break;
        copy_out(&h, data, size, tail, sizeof h);
        if (h.size < sizeof h || h.size > head - tail || h.size > size) {
            atomic_fetch_add_explicit(&t->ring->dropped, 1, memory_order_relaxed);
            tail = head; /* torn: nothing after it can be trusted */
            break;
        }
        if (h.type == PERF_RECORD_SAMPLE) {
            struct ps_slot_rec *r = ring_reserve(t->ring);
            if (!r) {
                left = 1; /* the sample ring is full: the caller drains it and comes back */
                break;
            }
            copy_out(rec, data, size, tail, h.size);
            uint64_t words = h.size / 8, nr = words >= 3 ? rec[2] : 0;
            if (words < 3 || nr > words - 3) {
                atomic_fetch_add_explicit(&t->ring->dropped, 1, memory_order_relaxed);
            } else {
                uint32_t n = 0;
                for (uint64_t i = 0; i < nr && n < max; i++)
                    if (rec[3 + i] < (uint64_t)PERF_CONTEXT_MAX) /* not a context marker */
                        r->frames[n++] = rec[3 + i];
                r->time_ns = rec[1];
                r->tid = (uint32_t)t->tid;
                r->nframes = n;
                r->weight = 1;
                r->flags = 0;
                ring_commit(t->ring);
                thread_count(&t->taken, 1);
                thread_count(&t->signals, 1);
            }
            thread_count(&t->arrived, 1);
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            uint64_t lost[2]; /* id, lost */
            copy_out(rec, data, size, tail, sizeof h + 16);
            memcpy(lost, (unsigned char *)rec + sizeof h, sizeof lost);
            atomic_fetch_add_explicit(&t->ring->dropped, lost[1], memory_order_relaxed);
            thread_count(&t->arrived, lost[1]);
        }
        tail += h.size;
    }
    __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
    return left;
}

void kchain_retire_if_done(struct ps_thread *t)
{
    if (!t->kchain || __atomic_load_n(&t->perf_fd, __ATOMIC_ACQUIRE) >= 0 || kchain_pending(t))
        return;
    munmap(t->perf_rb, t->perf_rb_len);
    t->perf_rb = NULL;
    t->kchain = 0;
}

void kchain_retire_done(void)
{
    int n = atomic_load(&ps_threads_used);
    for (int i = 0; i < n; i++)
        if (ps_threads[i].kchain)
            kchain_retire_if_done(&ps_threads[i]);
}

long kchain_pass_ms(void)
{
    if (ps_cfg.hz <= 0)
        return 1000;
    /* header, time, nr, the frames and the context marker */
    long rec = 8 + 8 + 8 + 8 * ((long)ps_cfg.max_frames + 1);
    long bytes = (long)KCHAIN_DATA_PAGES * sysconf(_SC_PAGESIZE);
    long ms = bytes / rec * 1000L / ps_cfg.hz / 2;
    return ms < 10 ? 10 : ms;
}
