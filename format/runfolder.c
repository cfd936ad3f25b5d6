/* runfolder.c: the run folder's names and checks (runfolder.h). It must never open a run file
 * for reading, and never follow a FIFO or a device. */
#include "runfolder.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "samples.h"
#include "textfile.h"

int runfolder_path(char *buf, size_t size, const char *dir, const char *name, char *err,
                   size_t errlen)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) {
        if (err)
            reader_error(err, errlen, dir, "path too long");
        return -1;
    }
    return 0;
}

int runfolder_optional(char *buf, size_t size, const char *dir, const char *name, char *err,
                       size_t errlen)
{
    if (runfolder_path(buf, size, dir, name, err, errlen) != 0)
        return -1;
    struct stat st;
    return stat(buf, &st) != 0 && errno == ENOENT ? 0 : 1;
}

int runfolder_check_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        reader_error(err, errlen, dir, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        reader_error(err, errlen, dir, "not a folder (want a perfscope output folder)");
        return -1;
    }
    return 0;
}

/* The shim's files, other than the sample files. */
static const char *const shim_files[] = {RUN_META, RUN_PHASES, RUN_COUNTERS, RUN_LOG, NULL};

int runfolder_holds_run(const char *dir)
{
    char p[PATH_MAX];
    struct stat st;
    for (int i = 0; shim_files[i]; i++)
        if (runfolder_path(p, sizeof p, dir, shim_files[i], NULL, 0) == 0 && lstat(p, &st) == 0)
            return 1;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    long pid;
    unsigned gen;
    for (struct dirent *e; !found && (e = readdir(d));)
        found = samples_parse_name(e->d_name, &pid, &gen) == 0;
    closedir(d);
    return found;
}

int runfolder_check_run(const char *dir, char *err, size_t errlen)
{
    if (runfolder_check_dir(dir, err, errlen) != 0)
        return -1;
    if (runfolder_holds_run(dir))
        return 0;
    reader_error(err, errlen, dir, "no perfscope output here (no meta.json, phases.jsonl, "
                                   "cpuprof.*.bin, counters.jsonl or perfscope.log)");
    return -1;
}

int runfolder_check_inputs(const char *dir, char *err, size_t errlen)
{
    static const char *const read_too[] = {RUN_PROFILE, RUN_TARGET_STDOUT, RUN_UNSAMPLED, NULL};
    DIR *d = opendir(dir);
    if (!d) {
        reader_error(err, errlen, dir, "cannot list: %s", strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        int wanted = strncmp(e->d_name, RUN_SAMPLES_PREFIX ".", sizeof RUN_SAMPLES_PREFIX) == 0;
        for (int i = 0; shim_files[i] && !wanted; i++)
            wanted = strcmp(e->d_name, shim_files[i]) == 0;
        for (int i = 0; read_too[i] && !wanted; i++)
            wanted = strcmp(e->d_name, read_too[i]) == 0;
        char path[PATH_MAX];
        struct stat st;
        if (!wanted || runfolder_path(path, sizeof path, dir, e->d_name, NULL, 0) != 0)
            continue;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            reader_error(err, errlen, path, "not a regular file");
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}
