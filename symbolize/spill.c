/* spill.c: the counted samples in an unnamed temporary file (see spill.h). It must never leave a
 * file behind (O_TMPFILE only, never a named fallback) and never hand out a record it did not
 * read in full. */
#include "spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int spill_open(struct spill *s, const char *dir)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
#ifdef O_TMPFILE
    /* (a zeroed struct spill, never opened, is closed as well: buf NULL, nothing to close) */
    s->buf = malloc(SPILL_BATCH * sizeof *s->buf);
    if (!s->buf)
        return -1;
    s->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        free(s->buf);
        s->buf = NULL;
        return -1;
    }
    s->ok = 1;
    return 0;
#else
    (void)dir;
    return -1;
#endif
}

static int write_all(int fd, const void *data, size_t len, off_t at)
{
    const char *p = data;
    while (len) {
        ssize_t w = pwrite(fd, p, len, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        at += w;
        len -= (size_t)w;
    }
    return 0;
}

void spill_flush(struct spill *s)
{
    if (!s->ok || !s->nbuf)
        return;
    off_t at = (off_t)((s->n - s->nbuf) * sizeof *s->buf);
    if (write_all(s->fd, s->buf, s->nbuf * sizeof *s->buf, at) != 0)
        s->ok = 0;
    s->nbuf = 0;
}

void spill_add(struct spill *s, uint64_t time_ns, uint32_t thread, int is_node, uint32_t id)
{
    if (!s->ok)
        return;
    if (id >= SPILL_NODE || (!is_node && id == 0)) {
        s->ok = 0;
        return;
    }
    s->buf[s->nbuf++] = (struct spill_rec){time_ns, thread, is_node ? SPILL_NODE | id : id};
    s->n++;
    if (s->nbuf == SPILL_BATCH)
        spill_flush(s);
}

int spill_read(const struct spill *s, uint64_t first, size_t n, struct spill_rec *out)
{
    if (!s->ok || s->nbuf || n > SPILL_BATCH || first > s->n || n > s->n - first)
        return -1;
    char *p = (char *)out;
    size_t len = n * sizeof *out;
    off_t at = (off_t)(first * sizeof *out);
    while (len) {
        ssize_t r = pread(s->fd, p, len, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        at += r;
        len -= (size_t)r;
    }
    return 0;
}

void spill_close(struct spill *s)
{
    if (s->buf) /* the buffer is there exactly while the file is open */
        close(s->fd);
    free(s->buf);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
