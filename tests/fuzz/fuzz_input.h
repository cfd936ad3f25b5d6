/* fuzz_input.h: shared by the libFuzzer harnesses (make fuzz). The readers take a path, as the
 * tools give them, so each input is written to a memfd and read back through /proc/self/fd/N:
 * a regular file that never touches the disk; the readers that take a run folder get a folder of
 * the harness's own (fuzz_dir, fuzz_put). Harness code only: never linked into the tools. */
#ifndef PERFSCOPE_FUZZ_INPUT_H
#define PERFSCOPE_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* All of data written to fd: 0, or -1. */
static inline int fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Writes data to a fresh memfd and fills path; returns the fd (close it after), or -1. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fuzz_write_all(fd, data, size) != 0) {
        close(fd);
        return -1;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* A u64 from the input's bytes, for lookups that depend on the input. */
static inline uint64_t fuzz_u64(const uint8_t *data, size_t size, size_t at)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && at + i < size; i++)
        v |= (uint64_t)data[at + i] << (8 * i);
    return v;
}

/* ---- a run folder of the harness's own ----
 * The readers that take a run folder (runmeta_load, runlog_load, the report's run model, the
 * symbolizer) get one folder per harness process: made at the first call under $FUZZ_TMPDIR
 * (make fuzz sets it inside $(BUILD)/fuzz), else /tmp, and emptied and removed at exit. */

#include <dirent.h>
#include <fcntl.h>
#include <string.h>

static char fuzz_dir_path[4096];

static inline void fuzz_dir_remove(void)
{
    DIR *d = opendir(fuzz_dir_path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    rmdir(fuzz_dir_path);
}

/* The folder's path; aborts when it cannot be made (the harness would test nothing). */
static inline const char *fuzz_dir(void)
{
    if (fuzz_dir_path[0])
        return fuzz_dir_path;
    const char *base = getenv("FUZZ_TMPDIR");
    snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/perfscope-fuzz.XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(fuzz_dir_path)) {
        perror(fuzz_dir_path);
        abort();
    }
    atexit(fuzz_dir_remove);
    return fuzz_dir_path;
}

/* fuzz_dir()/name holds exactly data[0..size) afterwards: 0, or -1. */
static inline int fuzz_put(const char *name, const uint8_t *data, size_t size)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (fuzz_write_all(fd, data, size) != 0) {
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Removes fuzz_dir()/name (what an earlier input left, or a tool's output). */
static inline void fuzz_unlink(const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    unlink(path);
}

/* The byte at `at`, 0 past the end: a choice made by the input (which file, how many lines). */
static inline unsigned fuzz_byte(const uint8_t *data, size_t size, size_t at)
{
    return at < size ? data[at] : 0;
}

#endif
