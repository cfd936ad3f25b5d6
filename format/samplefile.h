/* samplefile.h: THE layout of a stack sample file, cpuprof.<pid>[.<n>].bin (docs/formats.md),
 * included by the shim's writer (preload/writer.c), which puts it on disk, and by the one
 * reader (format/samples.c). The numbers here are the contract with the reference harness's
 * reader and with every file already written: they must never change. Nothing here allocates
 * or calls anything: the writer includes it into the shim.
 *
 * Little endian, no padding:
 *   header (40 bytes): u64 magic, u64 count, u64 dropped, u64 max_frames, u64 hz
 *   count records of 32 + 8*max_frames bytes:
 *     u64 time_ns (CLOCK_MONOTONIC), u32 tid, u32 nframes, char comm[16] (NUL padded),
 *     u64 frames[max_frames] (frame 0 the interrupted instruction, then return addresses)
 * count and dropped are rewritten at each flush; records beyond count may follow (written,
 * header not yet rewritten). */
#ifndef PERFSCOPE_SAMPLEFILE_H
#define PERFSCOPE_SAMPLEFILE_H

#include <stddef.h>
#include <stdint.h>

#define SAMPLEFILE_MAGIC 0x4c5053434f504531ULL /* "1EPOCSPL" read as little endian */
#define SAMPLEFILE_MAX_FRAMES 256              /* the deepest stack a file may declare */

/* The header: five u64 words, at these byte offsets. */
#define SAMPLEFILE_HEADER_BYTES 40
#define SAMPLEFILE_OFF_MAGIC 0
#define SAMPLEFILE_OFF_COUNT 8
#define SAMPLEFILE_OFF_DROPPED 16
#define SAMPLEFILE_OFF_MAX_FRAMES 24
#define SAMPLEFILE_OFF_HZ 32

/* A record: the fixed part, at these byte offsets, then max_frames u64 frames. */
#define SAMPLEFILE_REC_TIME 0
#define SAMPLEFILE_REC_TID 8
#define SAMPLEFILE_REC_NFRAMES 12
#define SAMPLEFILE_REC_COMM 16
#define SAMPLEFILE_COMM_BYTES 16
#define SAMPLEFILE_REC_FRAMES 32
#define SAMPLEFILE_RECORD_FIXED_BYTES 32

/* Bytes of one record in a file whose header says max_frames. */
static inline size_t samplefile_record_bytes(uint64_t max_frames)
{
    return SAMPLEFILE_RECORD_FIXED_BYTES + 8 * (size_t)max_frames;
}

#endif
