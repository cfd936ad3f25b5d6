/* fuzz_input.h: shared by the libFuzzer harnesses (make fuzz). The readers take a path, as the
 * tools give them, so each input is written to a memfd and read back through /proc/self/fd/N:
 * a regular file that never touches the disk. Harness code only: never linked into the tools. */
#ifndef PERFSCOPE_FUZZ_INPUT_H
#define PERFSCOPE_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a fresh memfd and fills path; returns the fd (close it after), or -1. */
static int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* A u64 from the input's bytes, for lookups that depend on the input. */
static uint64_t fuzz_u64(const uint8_t *data, size_t size, size_t at)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && at + i < size; i++)
        v |= (uint64_t)data[at + i] << (8 * i);
    return v;
}

#endif
