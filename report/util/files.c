/* files.c: the report's file helpers (files.h). It must never write: outputs go through
 * format/outfile.c. */
#include "files.h"
#include "textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int path_beside_self(const char *name, char *buf, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if (snprintf(buf, size, "%s/%s", self, name) >= (int)size)
        return -1;
    return 0;
}

int shim_path(char *buf, size_t size)
{
    char p[PATH_MAX];
    const char *env = getenv("PERFSCOPE_SHIM");
    if (env && *env)
        return env[0] == '/' && access(env, R_OK) == 0 && realpath(env, p) && strlen(p) < size
                   ? (memcpy(buf, p, strlen(p) + 1), 0)
                   : -1;
    const char *tries[] = {SHIM_FILE_NAME, "../lib/perfscope/" SHIM_FILE_NAME};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        char beside[PATH_MAX];
        if (path_beside_self(tries[i], beside, sizeof beside) == 0 && access(beside, R_OK) == 0 &&
            realpath(beside, p) && strlen(p) < size) {
            memcpy(buf, p, strlen(p) + 1);
            return 0;
        }
    }
    return -2;
}

long long file_mtime_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}
