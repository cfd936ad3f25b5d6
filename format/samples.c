/* samples.c: the stack sample file reader (see samples.h for the rules it applies). It reads the
 * file in blocks of whole records (SAMPLES_BLOCK_BYTES, or one record when a record is larger)
 * and hands out records from the block, frames in place where the host is little endian; a big
 * file's blocks are views into its mapping (filemap.h). It must never hold more than one block
 * (a mapping's pages are given back behind the block), never trust the header's count, never
 * crash on any bytes, and never hand out a mapped record it did not read whole from the file.
 * (A file cut after a record was handed out, before its caller read the frames, gives the caller
 * zeros there; the note counts every record handed out that lies past the cut.) */
#include "samples.h"
#include "runfolder.h"
#include "textfile.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* How far ahead of the record handed out its successor is fetched into the cache: 16 records of
 * the bench's 30 frames (272 bytes) are a page. On its 200k samples: 27.3 -> 24.3 ms wall, -3.3
 * ms CPU (15 alternated pairs; 4, 8 and 32 records gave -2.6 to -3.3 ms as well). */
#define PREFETCH_RECORDS 16

static uint64_t le64_at(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

static uint32_t le32_at(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return le32toh(v);
}

int samples_open(struct samples_file *sf, const char *path, char *err, size_t errlen)
{
    memset(sf, 0, sizeof *sf);
    sf->path = path;
    struct stat st;
    FILE *f = reader_fopen(path, "rbe", &st, err, errlen);
    if (!f)
        return -1;
    if (st.st_size == 0) {
        reader_error(err, errlen, path, "empty file (no sample header)");
        goto fail;
    }
    unsigned char h[SAMPLEFILE_HEADER_BYTES];
    size_t got = fread(h, 1, sizeof h, f);
    if (got < sizeof h) {
        if (ferror(f))
            reader_error(err, errlen, path, "read error: %s", strerror(errno));
        else
            reader_error(err, errlen, path, "truncated header (%zu of %d bytes)", got,
                         SAMPLEFILE_HEADER_BYTES);
        goto fail;
    }
    uint64_t magic = le64_at(h + SAMPLEFILE_OFF_MAGIC);
    if (magic != SAMPLEFILE_MAGIC) {
        reader_error(err, errlen, path, "not a perfscope sample file (magic 0x%016llx)",
                     (unsigned long long)magic);
        goto fail;
    }
    sf->hdr.count = le64_at(h + SAMPLEFILE_OFF_COUNT);
    sf->hdr.dropped = le64_at(h + SAMPLEFILE_OFF_DROPPED);
    sf->hdr.max_frames = le64_at(h + SAMPLEFILE_OFF_MAX_FRAMES);
    sf->hdr.hz = le64_at(h + SAMPLEFILE_OFF_HZ);
    if (sf->hdr.max_frames == 0 || sf->hdr.max_frames > SAMPLEFILE_MAX_FRAMES) {
        reader_error(err, errlen, path, "bad max_frames %llu in header (must be 1..%d)",
                     (unsigned long long)sf->hdr.max_frames, SAMPLEFILE_MAX_FRAMES);
        goto fail;
    }
    sf->record_bytes = samplefile_record_bytes(sf->hdr.max_frames);
    uint64_t body = (uint64_t)st.st_size - SAMPLEFILE_HEADER_BYTES;
    sf->held = body / sf->record_bytes;
    sf->cut = body % sf->record_bytes != 0;
    sf->records = sf->hdr.count < sf->held ? sf->hdr.count : sf->held;
    sf->beyond_count = sf->held > sf->hdr.count ? sf->held - sf->hdr.count : 0;
    /* Whole records per block, never more than the file holds: a small file gets a small one. */
    uint64_t per = SAMPLES_BLOCK_BYTES / sf->record_bytes;
    if (per == 0)
        per = 1;
    if (per > sf->records)
        per = sf->records ? sf->records : 1;
    sf->block_records = (size_t)per;
    sf->raw = malloc(sf->block_records * sf->record_bytes);
    if (!sf->raw) {
        reader_error(err, errlen, path, "out of memory");
        goto fail;
    }
    sf->f = f;
    sf->size = (uint64_t)st.st_size;
    return 0;
fail:
    fclose(f);
    sf->f = NULL;
    return -1;
}

/* The mapped file's size now, or -1. */
static int64_t size_now(const struct samples_file *sf)
{
    struct stat st;
    return fstat(fileno(sf->f), &st) == 0 ? (int64_t)st.st_size : -1;
}

/* The mapped file is now `now` bytes, shorter than before: its records end at its last whole
 * one (or where the reader already is, past it), as for a file cut before it was opened; the
 * note counts the records handed out from past the cut. */
static void mapped_cut(struct samples_file *sf, uint64_t now)
{
    uint64_t body = now > SAMPLEFILE_HEADER_BYTES ? now - SAMPLEFILE_HEADER_BYTES : 0;
    uint64_t whole = body / sf->record_bytes, end = whole > sf->done ? whole : sf->done;
    sf->shrunk = 1;
    sf->cut = 1;
    sf->size = now;
    if (sf->done > whole && sf->done - whole > sf->after_cut)
        sf->after_cut = sf->done - whole;
    if (end < sf->records)
        sf->records = end;
}

/* The record at sf->done read (some) zeros: the file was cut under it, and the records end
 * there (0), or a page could not be read though the file is no shorter (-1, a read error). */
static int mapped_stop(struct samples_file *sf)
{
    int64_t now = size_now(sf);
    if (now >= 0 && (uint64_t)now >= sf->size) {
        sf->records = sf->done;
        sf->error = EIO;
        reader_error(sf->error_msg, sizeof sf->error_msg, sf->path,
                     "read error at record %llu: a page of the file could not be read",
                     (unsigned long long)sf->done);
        return -1;
    }
    mapped_cut(sf, now >= 0 ? (uint64_t)now : 0);
    sf->records = sf->done;
    return 0;
}

/* The next block of whole records into sf->raw: 1, 0 at the end (a file that shrank after open
 * ends at its last whole record, as a cut file), -1 on a read error. */
static int fill(struct samples_file *sf)
{
    uint64_t left = sf->records - sf->done;
    size_t want = left < sf->block_records ? (size_t)left : sf->block_records;
    /* Mapped at the first block, not at open: a caller that only wants the header and the
     * count (a progress total) starts no thread. */
    if (!sf->map_tried) {
        sf->map_tried = 1;
        sf->mapped = sf->size >= SAMPLES_MAP_MIN_BYTES && sf->size <= SIZE_MAX &&
                     filemap_open(&sf->map, fileno(sf->f), (size_t)sf->size) == 0;
    }
    if (sf->mapped) {
        /* records never counts past the size at open, which the mapping holds whole; a file
         * cut since (one fstat a block) ends at the block's start */
        int64_t now = size_now(sf);
        if (now >= 0 && (uint64_t)now < sf->size) {
            mapped_cut(sf, (uint64_t)now);
            if (sf->done >= sf->records)
                return 0;
            if (want > sf->records - sf->done)
                want = (size_t)(sf->records - sf->done);
        }
        size_t off = SAMPLEFILE_HEADER_BYTES + (size_t)sf->done * sf->record_bytes;
        filemap_consumed(&sf->map, off);
        sf->blk = sf->map.base + off;
        sf->at = 0;
        sf->in_block = want;
        return want > 0 ? 1 : 0;
    }
    sf->blk = sf->raw;
    size_t got = fread(sf->raw, sf->record_bytes, want, sf->f);
    if (got < want) {
        if (ferror(sf->f)) {
            /* the whole records read before the error are still handed out, then the error */
            sf->error = errno ? errno : EIO;
            reader_error(sf->error_msg, sizeof sf->error_msg, sf->path,
                         "read error at record %llu: %s", (unsigned long long)(sf->done + got),
                         strerror(sf->error));
        }
        /* The file shrank after open: what was read before stands, as for a cut file. */
        sf->cut = 1;
        sf->records = sf->done + got;
    }
    sf->at = 0;
    sf->in_block = got;
    return got > 0 ? 1 : sf->error ? -1 : 0;
}

/* rc, with the error's line in err (told once) when it is -1. */
static int told(struct samples_file *sf, int rc, char *err, size_t errlen)
{
    if (rc < 0) {
        sf->error_told = 1;
        snprintf(err, errlen, "%s", sf->error_msg);
    }
    return rc;
}

/* Whether the mapped record r, of time t and n frames used, was read whole from the file: its
 * last byte touched first (a page past a cut faults, and reads zeros: filemap.h), and a record
 * with zeros where the shim never writes any (a time of 0, a last frame of 0: what a cut leaves
 * in the rest of its own page) checked against the file's size. */
static int mapped_whole(const struct samples_file *sf, const unsigned char *r, uint64_t t, uint32_t n)
{
    (void)*(volatile const unsigned char *)(r + sf->record_bytes - 1);
    if (filemap_shrank(&sf->map))
        return 0;
    if (t != 0 && (n == 0 || le64_at(r + SAMPLEFILE_REC_FRAMES + 8 * (size_t)(n - 1)) != 0))
        return 1;
    uint64_t end = SAMPLEFILE_HEADER_BYTES + sf->done * (uint64_t)sf->record_bytes +
                   SAMPLEFILE_REC_FRAMES + 8 * (uint64_t)n;
    int64_t now = size_now(sf);
    return now < 0 || (uint64_t)now >= end;
}

int samples_next(struct samples_file *sf, struct sample *s, char *err, size_t errlen)
{
    if (!sf->f || sf->done >= sf->records)
        return sf->f && sf->error && !sf->error_told ? told(sf, -1, err, errlen) : 0;
    if (sf->at == sf->in_block) {
        int rc = told(sf, fill(sf), err, errlen);
        if (rc <= 0)
            return rc;
    }
    const unsigned char *r = sf->blk + sf->at * sf->record_bytes;
    /* The record PREFETCH_RECORDS ahead, every 64-byte line it touches (records are not
     * line-aligned: 40 + n x record_bytes), asked for now (a prefetch never faults, whatever the
     * page): the hardware's own prefetcher stops at each page, and each record's first touch
     * waited for memory. */
    if (sf->at + PREFETCH_RECORDS < sf->in_block) {
        const unsigned char *q = r + PREFETCH_RECORDS * sf->record_bytes;
        const unsigned char *end = q + sf->record_bytes;
        for (q -= (uintptr_t)q & 63; q < end; q += 64)
            __builtin_prefetch(q);
    }
    uint64_t t = le64_at(r + SAMPLEFILE_REC_TIME);
    uint32_t n = le32_at(r + SAMPLEFILE_REC_NFRAMES), raw_n = n;
    if (n > sf->hdr.max_frames)
        n = (uint32_t)sf->hdr.max_frames;
    if (sf->mapped && !mapped_whole(sf, r, t, n))
        return told(sf, mapped_stop(sf), err, errlen);
    sf->at++;
    s->time_ns = t;
    s->tid = le32_at(r + SAMPLEFILE_REC_TID);
    if (raw_n != n)
        sf->clamped++;
    s->nframes = n;
    /* The name as the last record had it is copied as it was shown then (a thread's samples
     * follow one another); another is shown anew. */
    if (!sf->comm_seen || memcmp(sf->comm_raw, r + SAMPLEFILE_REC_COMM, SAMPLEFILE_COMM_BYTES) != 0) {
        memcpy(sf->comm_raw, r + SAMPLEFILE_REC_COMM, SAMPLEFILE_COMM_BYTES);
        for (int i = 0; i < SAMPLEFILE_COMM_BYTES; i++) {
            unsigned char c = sf->comm_raw[i];
            /* a control byte other than NUL */
            sf->comm_shown[i] = (unsigned char)(c - 1) < 0x1f || c == 0x7f ? '?' : (char)c;
        }
        sf->comm_shown[SAMPLEFILE_COMM_BYTES] = '\0';
        sf->comm_seen = 1;
    }
    memcpy(s->comm, sf->comm_shown, sizeof s->comm);
#if __BYTE_ORDER == __LITTLE_ENDIAN
    /* In place: the block is malloc'd (or a view into a page-aligned mapping, at 40 + a whole
     * number of records) and a record is 32 + 8 * max_frames bytes, so every record's frames
     * start 8-byte aligned. */
    s->frames = (const uint64_t *)(const void *)(r + SAMPLEFILE_REC_FRAMES);
#else
    for (uint32_t i = 0; i < n; i++)
        sf->frames[i] = le64_at(r + SAMPLEFILE_REC_FRAMES + 8 * (size_t)i);
    s->frames = sf->frames;
#endif
    sf->done++;
    return 1;
}

void samples_close(struct samples_file *sf)
{
    if (sf->mapped)
        filemap_close(&sf->map);
    sf->mapped = 0;
    if (sf->f)
        fclose(sf->f);
    free(sf->raw);
    sf->f = NULL;
    sf->raw = NULL;
}

void samples_note(const struct samples_file *sf, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
#define NOTE(...)                                                                            \
    do {                                                                                     \
        if (used < len) {                                                                    \
            int w = snprintf(buf + used, len - used, "%s", used ? "; " : "");                \
            if (w > 0)                                                                       \
                used += (size_t)w;                                                           \
            if (used < len) {                                                                \
                w = snprintf(buf + used, len - used, __VA_ARGS__);                           \
                if (w > 0)                                                                   \
                    used += (size_t)w;                                                       \
            }                                                                                \
        }                                                                                    \
    } while (0)
    if (sf->hdr.count > sf->held)
        NOTE("header says %llu records, file holds %llu", (unsigned long long)sf->hdr.count,
             (unsigned long long)sf->held);
    if (sf->shrunk)
        NOTE("the file was cut short while being read: %llu records used, %llu of them from past "
             "the cut (read before the cut, or as zeros after it)",
             (unsigned long long)sf->done, (unsigned long long)sf->after_cut);
    else if (sf->cut)
        NOTE("file ends mid-record (cut write)");
    if (sf->beyond_count)
        NOTE("%llu whole records after the header's count, not used",
             (unsigned long long)sf->beyond_count);
    if (sf->clamped)
        NOTE("%llu records had nframes > max_frames %llu (clamped)",
             (unsigned long long)sf->clamped, (unsigned long long)sf->hdr.max_frames);
#undef NOTE
}

/* Decimal digits at *p into *v, at most max; advances *p. */
static int take_number(const char **p, unsigned long long max, unsigned long long *v)
{
    uint64_t x;
    const char *s = *p;
    if (text_dec(&s, &x) != 0 || x > max)
        return -1;
    *p = s;
    *v = x;
    return 0;
}

int samples_parse_name(const char *path, long *pid, unsigned *gen)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char prefix[] = RUN_SAMPLES_PREFIX ".";
    if (strncmp(base, prefix, sizeof prefix - 1) != 0)
        return -1;
    const char *p = base + sizeof prefix - 1;
    unsigned long long a, b = 0;
    if (take_number(&p, INT_MAX, &a) != 0)
        return -1;
    if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
        p++;
        if (take_number(&p, UINT_MAX, &b) != 0)
            return -1;
    }
    if (strcmp(p, ".bin") != 0)
        return -1;
    *pid = (long)a;
    *gen = (unsigned)b;
    return 0;
}

int samples_maps_path(const char *bin_path, char *buf, size_t size)
{
    size_t n = strlen(bin_path);
    if (n < 4 || strcmp(bin_path + n - 4, ".bin") != 0 || n - 4 + sizeof ".maps" > size)
        return -1;
    memcpy(buf, bin_path, n - 4);
    memcpy(buf + n - 4, ".maps", sizeof ".maps");
    return 0;
}

static int by_pid_gen(const void *a, const void *b)
{
    const struct samples_name *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->gen > y->gen) - (x->gen < y->gen);
}

int samples_list(const char *dir, struct samples_name **out, size_t *n, char *err,
                 size_t errlen)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        reader_error(err, errlen, dir, "cannot list: %s", strerror(errno));
        return -1;
    }
    struct samples_name *v = NULL;
    size_t nv = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        long pid;
        unsigned gen;
        if (samples_parse_name(de->d_name, &pid, &gen) != 0)
            continue;
        if (nv == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct samples_name *nvv = realloc(v, ncap * sizeof *nvv);
            if (!nvv)
                break;
            v = nvv;
            cap = ncap;
        }
        size_t len = strlen(dir) + 1 + strlen(de->d_name) + 1;
        char *path = malloc(len);
        if (!path)
            break;
        snprintf(path, len, "%s/%s", dir, de->d_name);
        v[nv++] = (struct samples_name){path, path + strlen(dir) + 1, pid, gen};
    }
    closedir(d);
    if (de) {
        samples_list_free(v, nv);
        reader_error(err, errlen, dir, "out of memory");
        return -1;
    }
    if (nv)
        qsort(v, nv, sizeof *v, by_pid_gen);
    *out = v;
    *n = nv;
    return 0;
}

void samples_list_free(struct samples_name *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}
