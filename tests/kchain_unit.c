/* tests/kchain_unit.c: drives preload/kchain.c (built from the shim's source) for t_shim_ring,
 * on a buffer laid out as the kernel lays out a perf ring (a header page, then the data) in
 * anonymous memory, with records written here: a sample's chain comes into the thread's sample
 * ring without its context markers, cut at max_frames, with its time and the thread's tid; a
 * record across the buffer's end reads whole; a LOST record counts its samples dropped; a
 * chain longer than its record, a torn header and a head more than a buffer ahead are each one
 * drop, never walked past; more records than the sample ring holds come in over several pumps,
 * in order; once stopped nothing moves; a buffer is unmapped only when its event is closed and
 * it is empty. Prints one "FAIL ..." line per broken rule and exits 1, else "ok N". */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "kchain.h"
#include "unitcheck.h"

struct ps_config ps_cfg;

/* The shim's opener (fds.c) stands here for the one /proc read kchain_setup makes. */
int fds_run_open(const char *path, int flags, int mode)
{
    return open(path, flags | O_CLOEXEC, mode);
}

void fds_run_close(int fd)
{
    close(fd);
}

static int has_ipc_lock(void)
{
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    return syscall(SYS_capget, &h, d) == 0 && ((d[0].effective >> CAP_IPC_LOCK) & 1);
}


#define PAGE 4096
static struct ps_thread t;
static unsigned char *data;
static uint64_t size, head;

static struct perf_event_mmap_page *pg(void)
{
    return t.perf_rb;
}

/* Writes len bytes at the head, wrapping, and moves the head past them. */
static void put(const void *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        data[(head + i) & (size - 1)] = ((const unsigned char *)p)[i];
    head += len;
    pg()->data_head = head;
}

/* A PERF_RECORD_SAMPLE of sample_type TIME | CALLCHAIN: the user context marker, then ips. */
static void sample(uint64_t time, const uint64_t *ips, uint64_t n)
{
    uint64_t rec[64];
    struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, (uint16_t)(8 * (4 + n)) };
    memcpy(rec, &h, 8);
    rec[1] = time;
    rec[2] = n + 1;
    rec[3] = (uint64_t)PERF_CONTEXT_USER;
    memcpy(rec + 4, ips, 8 * n);
    put(rec, h.size);
}

static void start(void)
{
    memset(&t, 0, sizeof t);
    ps_cfg.max_frames = 8;
    ps_cfg.hz = 997;
    kchain_setup(PAGE);
    size = kchain_data_bytes();
    t.perf_rb_len = kchain_map_len();
    t.perf_rb = mmap(NULL, t.perf_rb_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data = (unsigned char *)t.perf_rb + PAGE;
    t.ring = ring_new(PS_RING_SLOTS, 8 + PS_HANDLER_FRAMES);
    t.tid = 42;
    t.perf_fd = 7; /* open */
    t.kchain = 1;
    head = 0;
}

/* Takes every record out of the sample ring: how many; the first one's copy into *first. */
static int drain(struct ps_slot_rec *first, uint64_t *times, int max)
{
    int n = 0;
    struct ps_slot_rec *r;
    while ((r = ring_peek(t.ring)) != NULL) {
        if (n == 0 && first)
            memcpy(first, r, sizeof *r + 8 * 8);
        if (times && n < max)
            times[n] = r->time_ns;
        n++;
        ring_release(t.ring);
    }
    return n;
}

int main(void)
{
    static union {
        struct ps_slot_rec r;
        unsigned char room[sizeof(struct ps_slot_rec) + 8 * 8];
    } got;
    start();
    CHECK(size == 16 * PAGE && t.perf_rb_len == 17 * PAGE, "997 Hz, 8 frames: 16 data pages (%llu bytes)",
          (unsigned long long)size);

    /* one sample: markers out, frames in order, time and tid */
    uint64_t ips[12] = { 0x1000, 0x2000, 0x3000, (uint64_t)PERF_CONTEXT_USER, 0x4000, 5, 6, 7, 8, 9, 10, 11 };
    sample(777, ips, 5);
    CHECK(kchain_pending(&t), "a record written: pending");
    CHECK(kchain_pump(&t) == 0, "one record: nothing left after the pump");
    CHECK(drain(&got.r, NULL, 0) == 1, "one record: one sample");
    CHECK(got.r.time_ns == 777 && got.r.tid == 42 && got.r.weight == 1 && got.r.nframes == 4 &&
              got.r.frames[0] == 0x1000 && got.r.frames[2] == 0x3000 && got.r.frames[3] == 0x4000,
          "the sample: time %llu tid %u frames %u [%llx %llx %llx %llx]", (unsigned long long)got.r.time_ns,
          got.r.tid, got.r.nframes, (unsigned long long)got.r.frames[0], (unsigned long long)got.r.frames[1],
          (unsigned long long)got.r.frames[2], (unsigned long long)got.r.frames[3]);
    CHECK(t.taken == 1 && t.signals == 1 && t.arrived == 1, "counted as the handler counts (%llu %llu %llu)",
          (unsigned long long)t.taken, (unsigned long long)t.signals, (unsigned long long)t.arrived);
    CHECK(pg()->data_tail == head && !kchain_pending(&t), "the tail given back to the kernel");

    /* cut at max_frames */
    sample(778, ips, 12);
    kchain_pump(&t);
    CHECK(drain(&got.r, NULL, 0) == 1 && got.r.nframes == 8, "12 ips, max_frames 8: %u frames", got.r.nframes);

    /* across the buffer's end */
    head = t.chain_tail = size - 24;
    pg()->data_head = head;
    sample(779, ips, 3);
    kchain_pump(&t);
    CHECK(drain(&got.r, NULL, 0) == 1 && got.r.time_ns == 779 && got.r.frames[2] == 0x3000,
          "a record across the end reads whole (time %llu)", (unsigned long long)got.r.time_ns);

    /* LOST: its samples dropped and arrived */
    uint64_t dropped0 = t.ring->dropped, arrived0 = t.arrived;
    struct perf_event_header lh = { PERF_RECORD_LOST, 0, 24 };
    uint64_t lost[3];
    memcpy(lost, &lh, 8);
    lost[1] = 99; /* id */
    lost[2] = 5;
    put(lost, 24);
    kchain_pump(&t);
    CHECK(t.ring->dropped == dropped0 + 5 && t.arrived == arrived0 + 5, "a LOST record of 5: dropped +%llu",
          (unsigned long long)(t.ring->dropped - dropped0));

    /* a chain longer than its record: one drop, the next record read */
    uint64_t bad[5];
    struct perf_event_header bh = { PERF_RECORD_SAMPLE, 0, 40 };
    memcpy(bad, &bh, 8);
    bad[1] = 1;
    bad[2] = 1000; /* nr */
    bad[3] = bad[4] = 0;
    put(bad, 40);
    sample(780, ips, 2);
    dropped0 = t.ring->dropped;
    kchain_pump(&t);
    CHECK(t.ring->dropped == dropped0 + 1 && drain(&got.r, NULL, 0) == 1 && got.r.time_ns == 780,
          "nr beyond its record: one drop, the next record kept");

    /* a torn header, and a head more than a buffer ahead: one drop each, nothing walked */
    struct perf_event_header zero = { PERF_RECORD_SAMPLE, 0, 0 };
    put(&zero, 8);
    sample(781, ips, 2);
    dropped0 = t.ring->dropped;
    kchain_pump(&t);
    CHECK(t.ring->dropped == dropped0 + 1 && drain(NULL, NULL, 0) == 0 && t.chain_tail == head,
          "a header of size 0: one drop, the rest skipped");
    /* the whole buffer holds valid records, all read; then a head 3 buffers on: walking from the
     * tail would read them again, three times over */
    head = t.chain_tail = (head + size) & ~(size - 1); /* records of 64 bytes from offset 0 */
    pg()->data_head = head;
    for (uint64_t filled = 0; filled < size; filled += 64) {
        sample(900, ips, 4);
        while (kchain_pump(&t))
            drain(NULL, NULL, 0);
        drain(NULL, NULL, 0);
    }
    head += 3 * size;
    pg()->data_head = head;
    pg()->data_tail = 0; /* a stray write: never read */
    dropped0 = t.ring->dropped;
    kchain_pump(&t);
    CHECK(t.ring->dropped == dropped0 + 1 && t.chain_tail == head && drain(NULL, NULL, 0) == 0,
          "a head 3 buffers ahead: one drop, nothing read again");

    /* more records than the sample ring holds: several pumps, in order */
    static uint64_t times[400];
    int n = 0, pumps = 0, more;
    for (int i = 0; i < 300; i++)
        sample(1000 + (uint64_t)i, ips, 3);
    do {
        more = kchain_pump(&t);
        pumps++;
        n += drain(NULL, times + n, 400 - n);
    } while (more && pumps < 10);
    int ordered = 1;
    for (int i = 0; i < n; i++)
        ordered &= times[i] == 1000 + (uint64_t)i;
    CHECK(n == 300 && pumps == 2 && ordered, "300 records through a ring of %d: %d in %d pumps, in order %d",
          PS_RING_SLOTS, n, pumps, ordered);

    /* stopped: nothing moves; an open event's buffer stays; closed and empty, it goes */
    sample(2000, ips, 2);
    kchain_stop();
    CHECK(!kchain_pending(&t) && kchain_pump(&t) == 0 && drain(NULL, NULL, 0) == 0, "stopped: nothing moved");
    kchain_resume();
    CHECK(kchain_pending(&t), "resumed: the record is there");
    kchain_retire_if_done(&t);
    CHECK(t.kchain && t.perf_rb, "an open event's buffer is kept");
    t.perf_fd = -1;
    kchain_retire_if_done(&t);
    CHECK(t.kchain && t.perf_rb, "a closed event's buffer with a record in it is kept");
    kchain_pump(&t);
    drain(NULL, NULL, 0);
    kchain_retire_if_done(&t);
    CHECK(!t.kchain && !t.perf_rb, "a closed event's empty buffer is unmapped");

    /* the rate sizes the buffers */
    ps_cfg.hz = 20000;
    ps_cfg.max_frames = 64;
    kchain_setup(PAGE);
    /* (without CAP_IPC_LOCK capped at a sixteenth of the user's perf allowance, 16 pages at least) */
    size_t pages = kchain_data_bytes() / PAGE;
    CHECK(has_ipc_lock() ? pages == 256 : pages >= 16 && pages <= 256 && !(pages & (pages - 1)),
          "20000 Hz, 64 frames: 256 data pages with CAP_IPC_LOCK, a power of two from 16 without (%zu)", pages);
    CHECK(kchain_pass_ms() >= (has_ipc_lock() ? 40 : 10), "20000 Hz: a pass every %ld ms", kchain_pass_ms());
    return unit_done();
}
