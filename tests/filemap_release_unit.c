/* filemap_release_unit DIR: format/filemap.c gives the pages a reader has gone past back, so a
 * big file read through it never stays resident whole: a 96 MiB file in DIR is read start to
 * end as samples.c reads it (a page touched at a time, filemap_consumed at each 64 KiB block's
 * start), and the process's RssFile (/proc/self/status) must stay within 32 MiB of what it was
 * before. Built twice by t_tools_filemap_release: as is, and with madvise wrapped so that
 * MADV_POPULATE_READ is refused (EINVAL, as kernels before 5.14 answer): then the populating
 * thread ends at once and the reader must give its pages back itself. Prints the peak and "ok";
 * exit 1 when over the bound. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "filemap.h"

#ifdef REFUSE_POPULATE
int __real_madvise(void *addr, size_t len, int advice);
int __wrap_madvise(void *addr, size_t len, int advice)
{
    if (advice == 22) { /* MADV_POPULATE_READ */
        errno = EINVAL;
        return -1;
    }
    return __real_madvise(addr, len, advice);
}
#endif

static long rss_file_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssFile: %ld kB", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    const size_t len = (size_t)96 << 20, block = (size_t)64 << 10;
    char path[4096];
    snprintf(path, sizeof path, "%s/big.bin", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 2;
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    for (size_t at = 0; at < len; at += sizeof chunk)
        if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk)
            return 2;
    long before = rss_file_kib();
    struct filemap m;
    if (filemap_open(&m, fd, len) != 0) {
        printf("FAIL: filemap_open\n");
        return 1;
    }
    long peak = before;
    unsigned sum = 0;
    for (size_t at = 0; at < len; at += block) {
        filemap_consumed(&m, at);
        for (size_t pg = at; pg < at + block; pg += 4096)
            sum += m.base[pg];
        if (at % ((size_t)1 << 20) == 0) {
            long r = rss_file_kib();
            if (r > peak)
                peak = r;
        }
    }
    filemap_close(&m);
    close(fd);
    unlink(path);
    long over = (peak - before) / 1024;
    printf("RssFile before %ld KiB, peak %ld KiB: %ld MiB over (bound 32; the file is 96)%s\n",
           before, peak, over, sum ? "" : " ");
    if (before < 0 || over > 32) {
        printf("FAIL: the pages read stayed resident\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
