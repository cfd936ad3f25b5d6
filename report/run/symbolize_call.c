/* symbolize_call.c: profile_ensure (symbolize_call.h): runs build/perfscope-symbolize OUT, the
 * binary beside this one, when OUT/profile.json is missing or older than the run's samples and
 * phases. It must never run anything but that binary, never let the symbolizer's output reach
 * our stdout, and never fail the report: a symbolizer that is missing or fails is a note. */
#include "symbolize_call.h"
#include "runfolder.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The last non-empty line of text (the tool's one-line error), cleaned, into out. */
static void last_line(char *text, char *out, size_t outlen)
{
    char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        *--end = '\0';
    char *start = strrchr(text, '\n');
    start = start ? start + 1 : text;
    snprintf(out, outlen, "%s", start);
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = '?';
}

static int run_symbolizer(const char *tool, const char *dir, char *note, size_t notelen)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        snprintf(note, notelen, "cannot run %s: %s", tool, strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    /* Our stderr, when a terminal, as the child's descriptor 3 for its progress line; its own
     * stderr is the pipe, for the one-line error. */
    int tty = isatty(2);
    if (tty)
        posix_spawn_file_actions_adddup2(&fa, 2, 3);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    char *argv_tty[] = {(char *)tool, "--progress-fd", "3", (char *)dir, NULL};
    char *argv_plain[] = {(char *)tool, (char *)dir, NULL};
    char **argv = tty ? argv_tty : argv_plain;
    pid_t pid;
    int rc = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        snprintf(note, notelen, "cannot run %s: %s", tool, strerror(rc));
        return -1;
    }
    char tail[2048] = "";
    size_t have = 0;
    char buf[1024];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        /* keep the last sizeof tail - 1 bytes (buf is smaller than tail) */
        size_t k = (size_t)n;
        if (have + k > sizeof tail - 1) {
            size_t drop = have + k - (sizeof tail - 1);
            memmove(tail, tail + drop, have - drop);
            have -= drop;
        }
        memcpy(tail + have, buf, k);
        have += k;
        tail[have] = '\0';
    }
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char line[512];
    last_line(tail, line, sizeof line);
    if (WIFEXITED(status))
        snprintf(note, notelen, "perfscope-symbolize failed (exit %d)%s%s", WEXITSTATUS(status),
                 line[0] ? ": " : "", line);
    else
        snprintf(note, notelen, "perfscope-symbolize died of signal %d", WTERMSIG(status));
    return -1;
}

int profile_ensure(const char *dir, long long newest_input_ns, char *note, size_t notelen)
{
    char path[PATH_MAX], tool[PATH_MAX];
    note[0] = '\0';
    if (runfolder_path(path, sizeof path, dir, RUN_PROFILE, NULL, 0) != 0) {
        snprintf(note, notelen, "run folder path too long");
        return -1;
    }
    long long have = file_mtime_ns(path);
    if (have && have >= newest_input_ns)
        return 0;
    if (path_beside_self("perfscope-symbolize", tool, sizeof tool) != 0 || access(tool, X_OK) != 0) {
        snprintf(note, notelen, "hot functions skipped: perfscope-symbolize is not built (make)%s",
                 have ? "; profile.json is older than the samples" : "");
        return -1;
    }
    if (run_symbolizer(tool, dir, note, notelen) != 0)
        return -1;
    if (file_mtime_ns(path) == 0) {
        snprintf(note, notelen, "perfscope-symbolize wrote no profile.json");
        return -1;
    }
    return 0;
}
