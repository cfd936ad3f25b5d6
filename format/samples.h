/* samples.h: THE reader of the shim's stack sample files (docs/formats.md), cpuprof.<pid>[.<n>].bin.
 * Every tool that reads samples goes through here. Records are streamed one at a time out of
 * blocks of SAMPLES_BLOCK_BYTES, so memory never grows with the file; hostile input gives a one-line error naming the file, never a crash.
 * The layout is format/samplefile.h's, the one the shim's writer includes.
 *
 * What is accepted, and why (the shim may be killed mid-write):
 *   - a file that ends mid-record, or whose header count is larger than what it holds: the whole
 *     records before the cut are used (count clamped), and samples_note() says so;
 *   - a record with nframes > max_frames: clamped to max_frames (what the reference reader's
 *     slice does), and counted in `clamped`;
 *   - complete records beyond the header count (the header is rewritten after the records at each
 *     flush) are not used, as in the reference reader, but counted in `beyond_count`.
 * What is refused (samples_open returns -1): missing or unreadable file, not a regular file,
 * empty file, header shorter than 40 bytes, wrong magic, max_frames 0 or above 256. */
#ifndef PERFSCOPE_SAMPLES_H
#define PERFSCOPE_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "samplefile.h"
#include "filemap.h"

/* Bytes read at a time: whole records, one at least. */
#define SAMPLES_BLOCK_BYTES (1u << 20)
/* Files of at least this many bytes are mapped (filemap.h) rather than read: the blocks are then
 * views into the mapping, read ahead on filemap's thread. */
#define SAMPLES_MAP_MIN_BYTES (2u << 20)

struct samples_header {
    uint64_t count;       /* records, as the header says (may exceed what the file holds) */
    uint64_t dropped;     /* samples the shim could not keep */
    uint64_t max_frames;  /* 1..SAMPLEFILE_MAX_FRAMES once opened */
    uint64_t hz;          /* requested samples per CPU second; 0 if unknown */
};

/* One record. frames points into the reader and is valid until the next samples_next(); where it
 * points into the block itself (little-endian hosts: frames != the file's own `frames` buffer),
 * until the next samples_next() that reads a block (samples_in_block() 0 before it). */
struct sample {
    uint64_t time_ns;     /* CLOCK_MONOTONIC */
    uint32_t tid;
    uint32_t nframes;     /* after clamping to max_frames */
    char comm[SAMPLEFILE_COMM_BYTES + 1];       /* thread name, NUL terminated; control bytes shown as '?' */
    const uint64_t *frames;
};

/* An open sample file. Fields are read-only for callers. It must not be moved or copied between
 * samples_open and samples_close: a mapped file's populating thread holds a pointer into it
 * (filemap.h). */
struct samples_file {
    const char *path;       /* as given to samples_open (not copied) */
    struct samples_header hdr;
    uint64_t records;       /* records samples_next() will return: min(count, held) */
    uint64_t held;          /* whole records the file holds */
    uint64_t beyond_count;  /* whole records after the header's count (held - count, if more) */
    int cut;                /* the file ends inside a record */
    uint64_t done;          /* records returned so far */
    uint64_t clamped;       /* records whose nframes exceeded max_frames */
    size_t record_bytes;
    FILE *f;
    unsigned char *raw;     /* one block: block_records records (read files) */
    const unsigned char *blk; /* the block handed out: raw, or a view into the mapping */
    uint64_t size;          /* bytes at open */
    struct filemap map;
    int map_tried, mapped;
    int shrunk;             /* a mapped file cut short while being read (filemap.h) */
    uint64_t after_cut;     /* records handed out from past that cut: they read zeros */
    size_t block_records;
    size_t in_block, at;    /* records read into the block, and handed out of it */
    int error, error_told;  /* a read error (errno), and whether samples_next() returned -1 */
    char error_msg[320];    /* its one line */
    uint64_t frames[SAMPLEFILE_MAX_FRAMES]; /* big-endian hosts: the frames converted */
    unsigned char comm_raw[SAMPLEFILE_COMM_BYTES]; /* the last record's name, as in the file */
    char comm_shown[SAMPLEFILE_COMM_BYTES + 1];    /* and as handed out (control bytes '?') */
    int comm_seen;
};

/* Opens and checks the header. Returns 0, or -1 with "<path>: <what is wrong>" in err. */
int samples_open(struct samples_file *sf, const char *path, char *err, size_t errlen);

/* The next record into *s: 1, 0 at the end, -1 on a read error (message in err). */
int samples_next(struct samples_file *sf, struct sample *s, char *err, size_t errlen);

void samples_close(struct samples_file *sf);

/* Records samples_next() hands out before it reads the next block. */
static inline size_t samples_in_block(const struct samples_file *sf)
{
    return sf->in_block - sf->at;
}

/* One line describing how the file departs from a clean one ("" when it does not): a cut record,
 * a header count beyond the file, clamped frame counts. Valid after open; complete after the
 * last samples_next(). */
void samples_note(const struct samples_file *sf, char *buf, size_t len);

/* Parses a sample file's name (any leading folders ignored): cpuprof.<pid>.bin gives gen 0,
 * cpuprof.<pid>.<n>.bin gives gen n (the n-th exec of that pid). Returns 0, or -1 if the name
 * is not of that form. */
int samples_parse_name(const char *path, long *pid, unsigned *gen);

/* The maps snapshots beside a sample file (the same stem, cpuprof.<pid>[.<n>].maps)
 * into buf: 0, or -1 when bin_path does not end in ".bin" or the name does not fit. */
int samples_maps_path(const char *bin_path, char *buf, size_t size);

/* One sample file of a run folder. */
struct samples_name {
    char *path;          /* "<dir>/<file>" (allocated) */
    const char *file;    /* its basename, inside path */
    long pid;
    unsigned gen;
};

/* The sample files of dir (the names samples_parse_name takes), sorted by pid, then exec
 * generation: 0 with *n entries in *out (none is not an error; free with samples_list_free), or
 * -1 with "<dir>: cannot list: <why>" or "<dir>: out of memory" in err. */
int samples_list(const char *dir, struct samples_name **out, size_t *n, char *err,
                 size_t errlen);
void samples_list_free(struct samples_name *v, size_t n);

#endif
