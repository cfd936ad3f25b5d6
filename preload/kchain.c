/* kchain.c: the kernel's call-chain records into the sample rings (kchain.h). Every length in a
 * record is checked against the buffer before it is read: a torn record ends the drain of that
 * buffer (one drop counted), it is never walked past. */
#include "kchain.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "fds.h"

static size_t page_bytes = 4096, data_pages = 16;
unsigned kchain_max_stack = 127;
static _Atomic int stopped;
static _Atomic size_t smallest_data; /* the smallest buffer mapped (0: none yet) */

/* One record at most: header, time, nr, the frames and the context marker. */
static size_t record_max(void)
{
    return 8 + 8 + 8 + 8 * ((size_t)ps_cfg.max_frames + 1);
}

/* Whether this process may lock memory beyond the perf allowance (CAP_IPC_LOCK in force). */
static int may_lock_more(void)
{
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return 0;
    return (d[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1;
}

/* The user's locked-memory allowance for perf buffers: kernel.perf_event_mlock_kb per CPU. */
static size_t perf_allowance(void)
{
    long kb = 516; /* the kernel's default */
    char buf[32];
    int fd = fds_run_open("/proc/sys/kernel/perf_event_mlock_kb", O_RDONLY, 0);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        fds_run_close(fd);
        if (n > 0) {
            buf[n] = 0;
            long v = strtol(buf, NULL, 10);
            if (v > 0)
                kb = v;
        }
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return (size_t)kb * 1024 * (size_t)(cpus > 0 ? cpus : 1);
}

void kchain_setup(long page)
{
    page_bytes = (size_t)page;
    kchain_max_stack = (unsigned)(ps_cfg.max_frames < 127 ? ps_cfg.max_frames : 127);
    double want = (double)record_max() * (ps_cfg.hz > 0 ? ps_cfg.hz : 1) * 0.12;
    data_pages = 16;
    while (data_pages < 256 && (double)(data_pages * page_bytes) < want)
        data_pages *= 2;
    /* Without CAP_IPC_LOCK every buffer comes out of one allowance for all the user's threads:
     * no more than a sixteenth of it each, so that at least 16 threads get one, at the price of
     * more passes (and lost records, counted, at rates whose records outrun 16 pages). */
    if (data_pages > 16 && !may_lock_more()) {
        size_t share = perf_allowance() / 16 / page_bytes;
        while (data_pages > 16 && data_pages + 1 > share)
            data_pages /= 2;
    }
}

size_t kchain_data_bytes(void)
{
    return data_pages * page_bytes;
}

size_t kchain_map_len(void)
{
    return (data_pages + 1) * page_bytes;
}

size_t kchain_map_len_smaller(size_t len)
{
    size_t pages = len / page_bytes - 1;
    return pages / 2 >= 16 ? (pages / 2 + 1) * page_bytes : 0;
}

void kchain_mapped(size_t len)
{
    size_t data = len - page_bytes, was = atomic_load(&smallest_data);
    while ((was == 0 || data < was) && !atomic_compare_exchange_weak(&smallest_data, &was, data))
        ;
}

void kchain_stop(void)
{
    atomic_store(&stopped, 1);
}

void kchain_resume(void)
{
    atomic_store(&stopped, 0);
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

/* The data area as mapped (the header page's data_offset and data_size say the same, but the
 * page is writable: a value read there never decides where we read). */
static const unsigned char *data_of(const struct ps_thread *t, uint64_t *size)
{
    *size = t->perf_rb_len - page_bytes;
    return (const unsigned char *)t->perf_rb + page_bytes;
}

int kchain_pending(const struct ps_thread *t)
{
    if (!t->kchain || !t->perf_rb || atomic_load(&stopped))
        return 0;
    const struct perf_event_mmap_page *pg = t->perf_rb;
    return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) != t->chain_tail;
}

/* One PERF_RECORD_SAMPLE (sample_type TIME | CALLCHAIN): u64 time, u64 nr, u64 ips[nr]. */
#define KCHAIN_REC_MAX 65536 /* a record's size is a u16 */

int kchain_pump(struct ps_thread *t)
{
    if (!t->kchain || !t->perf_rb || !t->ring || atomic_load(&stopped))
        return 0;
    struct perf_event_mmap_page *pg = t->perf_rb;
    uint64_t size;
    const unsigned char *data = data_of(t, &size);
    /* Our own tail, not the header page's (writable: a target's stray write there must not
     * send us walking); the kernel never lets head run more than a buffer ahead of it. */
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = t->chain_tail;
    if (head - tail > size) {
        atomic_fetch_add_explicit(&t->ring->dropped, 1, memory_order_relaxed);
        tail = head;
    }
    static uint64_t rec[KCHAIN_REC_MAX / 8]; /* one pump at a time: the io lock */
    uint32_t max = (uint32_t)ps_cfg.max_frames;
    int left = 0;
    while (tail < head && !atomic_load_explicit(&stopped, memory_order_relaxed)) {
        struct perf_event_header h;
        if (head - tail < sizeof h)
            break;
        copy_out(&h, data, size, tail, sizeof h);
        if (h.size < sizeof h || h.size > head - tail || h.size > size) {
            /* torn (only a target writing over our header page could): nothing after it can be
             * trusted, and how many records that was is unknown; one drop is counted */
            atomic_fetch_add_explicit(&t->ring->dropped, 1, memory_order_relaxed);
            tail = head;
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
    t->chain_tail = tail;
    __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
    return left;
}

void kchain_retire_if_done(struct ps_thread *t)
{
    if (!t->kchain || __atomic_load_n(&t->perf_fd, __ATOMIC_ACQUIRE) >= 0 ||
        (!atomic_load(&stopped) && kchain_pending(t)))
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
    size_t smallest = atomic_load(&smallest_data), bytes = smallest && smallest < kchain_data_bytes() ? smallest
                                                                                                   : kchain_data_bytes();
    long ms = (long)(bytes / record_max()) * 1000L / ps_cfg.hz / 2;
    return ms < 10 ? 10 : ms; /* (the buffers hold 60 ms of the largest records at least) */
}
