/* outfile.c: temporary name, then rename (see outfile.h). It must never leave a temporary file
 * behind on any path out, and never report success for a write that failed. */
#include "outfile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int outfile_open(struct outfile *o, const char *dir, const char *name, char *err, size_t errlen)
{
    o->f = NULL;
    int n = snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
    int m = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof o->path || m < 0 || (size_t)m >= sizeof o->tmp) {
        snprintf(err, errlen, "%s/%s: path too long", dir, name);
        return -1;
    }
    o->f = fopen(o->tmp, "we");
    if (!o->f) {
        snprintf(err, errlen, "%s: cannot write: %s", o->tmp, strerror(errno));
        return -1;
    }
    return 0;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
    if (!o->f)
        return -1;
    int bad = ferror(o->f);
    int saved = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    o->f = NULL;
    if (bad) {
        snprintf(err, errlen, "%s: write failed: %s", o->tmp, strerror(saved ? saved : EIO));
        unlink(o->tmp);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        snprintf(err, errlen, "%s: cannot rename into place: %s", o->path, strerror(errno));
        unlink(o->tmp);
        return -1;
    }
    return 0;
}

void outfile_abort(struct outfile *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    unlink(o->tmp);
}
