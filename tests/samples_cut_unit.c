/* samples_cut_unit DIR: format/samples.c reading a sample file big enough to be mapped
 * (filemap.h) while the file is cut short under it (tests/t_tools_samples_cut.sh makes it).
 * Each case writes DIR/cut.bin (20,000 records of 30 frames, 5.4 MB, every record's time, tid
 * and frames telling its index), reads some records, truncates the file, reads on to the end:
 * - the reader never crashes and ends with 0, never -1;
 * - none is handed out from past the cut's page (records there read as zeros, which
 *   SIGBUS-and-zeros would give: the reader stops at the first fault);
 * - the note says the file was cut short while being read, and how many records came from
 *   past the cut (the ones not as written).
 * Cases: cut at record 7,000 after reading 5,000; cut to the header alone after reading 1; cut
 * 100 bytes short of the end after reading 19,000 (inside the last page: nothing faults); and a
 * file not cut (all 20,000, no note). Then a SIGBUS sent by kill to this process still
 * ends it with SIGBUS (the handler passes what is not its own on): checked by the caller. */
#include "samples.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORDS 20000
#define FRAMES 30

static int failed;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok" : "FAIL", what);
    if (!ok)
        failed = 1;
}

static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8); /* little-endian host (x86-64, aarch64) */
}

static int write_file(const char *path)
{
    size_t rb = samplefile_record_bytes(FRAMES);
    unsigned char *buf = calloc(1, SAMPLEFILE_HEADER_BYTES + (size_t)RECORDS * rb);
    if (!buf)
        return -1;
    put64(buf + SAMPLEFILE_OFF_MAGIC, SAMPLEFILE_MAGIC);
    put64(buf + SAMPLEFILE_OFF_COUNT, RECORDS);
    put64(buf + SAMPLEFILE_OFF_MAX_FRAMES, FRAMES);
    put64(buf + SAMPLEFILE_OFF_HZ, 199);
    for (uint64_t i = 0; i < RECORDS; i++) {
        unsigned char *r = buf + SAMPLEFILE_HEADER_BYTES + i * rb;
        put64(r + SAMPLEFILE_REC_TIME, 1000000 + i);
        uint32_t tid = 100 + (uint32_t)(i % 7), n = FRAMES;
        memcpy(r + SAMPLEFILE_REC_TID, &tid, 4);
        memcpy(r + SAMPLEFILE_REC_NFRAMES, &n, 4);
        memcpy(r + SAMPLEFILE_REC_COMM, "worker", 6);
        for (int k = 0; k < FRAMES; k++)
            put64(r + SAMPLEFILE_REC_FRAMES + 8 * (size_t)k, 0x400000 + i * 64 + (uint64_t)k);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    size_t len = SAMPLEFILE_HEADER_BYTES + (size_t)RECORDS * rb;
    int ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    free(buf);
    return ok ? 0 : -1;
}

/* Reads `before` records, cuts the file to `cut_bytes` (-1: not cut), reads to the end. */
static void one_case(const char *path, uint64_t before, long long cut_bytes, const char *name)
{
    char what[256], err[512];
    if (write_file(path) != 0) {
        check(0, "cannot write the sample file");
        return;
    }
    struct samples_file sf;
    if (samples_open(&sf, path, err, sizeof err) != 0) {
        printf("  %s\n", err);
        check(0, "samples_open");
        return;
    }
    struct sample s;
    uint64_t got = 0, wrong = 0;
    int rc;
    while ((rc = samples_next(&sf, &s, err, sizeof err)) == 1) {
        if (s.time_ns != 1000000 + got || s.nframes != FRAMES || s.frames[FRAMES - 1] != 0x400000 + got * 64 + FRAMES - 1)
            wrong++;
        got++;
        if (got == before && cut_bytes >= 0 && truncate(path, cut_bytes) != 0)
            check(0, "truncate");
    }
    char note[512];
    samples_note(&sf, note, sizeof note);
    check(sf.mapped, "the file was read through its mapping");
    samples_close(&sf);
    size_t rb = samplefile_record_bytes(FRAMES);
    uint64_t whole = cut_bytes < 0 ? RECORDS : (uint64_t)(cut_bytes - SAMPLEFILE_HEADER_BYTES) / rb;
    /* the records read before the cut, and those wholly before it: nothing read after the cut
     * from past it (zeros: the rest of the cut's page, and the SIGBUS-and-zeros past it) */
    uint64_t most = whole > before ? whole : before;
    printf("  %s: %llu records handed out, %llu not the ones written; whole records before the cut %llu; note: %s\n",
           name, (unsigned long long)got, (unsigned long long)wrong, (unsigned long long)whole, note);
    snprintf(what, sizeof what, "%s: the reading ends with 0 (rc %d)", name, rc);
    check(rc == 0, what);
    snprintf(what, sizeof what, "%s: every whole record before the cut, and those read before it, no more (%llu)",
             name, (unsigned long long)most);
    check(got == most, what);
    snprintf(what, sizeof what, "%s: every record handed out is the one written", name);
    check(wrong == 0, what);
    snprintf(what, sizeof what, "%s: the note %s", name, cut_bytes < 0 ? "is empty" : "says the file was cut short");
    check(cut_bytes < 0 ? note[0] == '\0' : strstr(note, "cut short while being read") != NULL, what);
    if (cut_bytes >= 0) {
        char want[64];
        snprintf(want, sizeof want, "%llu of them from past the cut", (unsigned long long)(got > whole ? got - whole : 0));
        snprintf(what, sizeof what, "%s: the note counts the records from past the cut (\"%s\")", name, want);
        check(strstr(note, want) != NULL, what);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/cut.bin", argv[1]);
    size_t rb = samplefile_record_bytes(FRAMES);
    one_case(path, 5000, (long long)(SAMPLEFILE_HEADER_BYTES + 7000 * rb + rb / 2), "cut at record 7000");
    one_case(path, 1, SAMPLEFILE_HEADER_BYTES, "cut to the header");
    one_case(path, 19000, (long long)(SAMPLEFILE_HEADER_BYTES + RECORDS * rb - 100), "cut inside the last page");
    one_case(path, 0, -1, "not cut");
    if (argc > 2 && strcmp(argv[2], "kill") == 0) {
        fflush(stdout);
        kill(getpid(), SIGBUS); /* not a fault in a mapping: must end this process */
        printf("FAIL still alive after SIGBUS\n");
        return 1;
    }
    return failed;
}
