/* outfile_unit DIR: format/outfile.c's commit in a scratch folder (tests/t_outfile.sh makes it),
 * for both ways into place: a file opened by path (renamed over the old one) and a derived
 * output opened in a folder (outfile_open: exchanged with the old one, which is then removed).
 * Prints one "ok ..." or "FAIL ..." line a check and exits 1 when any failed. The checks, each
 * way: a new name; over a regular file (its content replaced; another hard link and a
 * descriptor still open on the old file keep the old content); over a symbolic link (the name
 * becomes the file, the link's target is untouched); over a folder (fails, the folder
 * untouched); and a reader that opens the name again and again while 2,000 commits replace it
 * never finds it missing or short. No temporary file is left by any of them, nor by a kill
 * (SIGINT, SIGTERM, SIGHUP at their default) while a file is written. */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok" : "FAIL", what);
    if (!ok)
        failed = 1;
}

static int derived; /* the way into place under test: outfile_open (1) or outfile_open_path */

static int write_file(const char *path, const char *text)
{
    struct outfile o;
    char err[512];
    int rc;
    if (derived) {
        const char *slash = strrchr(path, '/');
        char dir[256] = ".";
        if (slash)
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        rc = outfile_open(&o, dir, slash ? slash + 1 : path, err, sizeof err);
    } else {
        rc = outfile_open_path(&o, path, err, sizeof err);
    }
    if (rc != 0) {
        printf("  %s\n", err);
        return -1;
    }
    fputs(text, o.f);
    if (outfile_commit(&o, err, sizeof err) != 0) {
        printf("  %s\n", err);
        return -1;
    }
    return 0;
}

static int holds(const char *path, const char *text)
{
    char buf[256];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        return 0;
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

static int temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp."))
            n++;
    if (d)
        closedir(d);
    return n;
}

static void run_all(const char *way)
{
    char what[256];
#define CHECK(ok, text) (snprintf(what, sizeof what, "%s: %s", way, text), check(ok, what))
    CHECK(write_file("new.txt", "first\n") == 0 && holds("new.txt", "first\n"), "a new name");

    /* Over a regular file. */
    int w = write_file("out.txt", "old\n") == 0 && link("out.txt", "other.txt") == 0;
    int keep = open("out.txt", O_RDONLY);
    struct stat before, after;
    w = w && keep >= 0 && stat("out.txt", &before) == 0;
    CHECK(w && write_file("out.txt", "new\n") == 0 && holds("out.txt", "new\n"), "over a file: replaced");
    CHECK(stat("out.txt", &after) == 0 && after.st_ino != before.st_ino && after.st_nlink == 1,
          "over a file: a new file under the name, with one link");
    CHECK(holds("other.txt", "old\n"), "over a file: another hard link keeps the old content");
    char buf[16] = "";
    CHECK(keep >= 0 && pread(keep, buf, sizeof buf - 1, 0) == 4 && strcmp(buf, "old\n") == 0,
          "over a file: a descriptor open on it reads the old content");
    if (keep >= 0)
        close(keep);

    /* Over a symbolic link. */
    w = write_file("target.txt", "target\n") == 0 && symlink("target.txt", "link.txt") == 0;
    struct stat ls;
    CHECK(w && write_file("link.txt", "through\n") == 0 && lstat("link.txt", &ls) == 0 &&
              S_ISREG(ls.st_mode) && holds("link.txt", "through\n") && holds("target.txt", "target\n"),
          "over a symbolic link: the name becomes the file, the target untouched");

    /* Over a folder. */
    w = mkdir("folder", 0755) == 0 && write_file("folder/inside.txt", "inside\n") == 0;
    struct stat fs;
    CHECK(w && write_file("folder", "file\n") != 0 && stat("folder", &fs) == 0 && S_ISDIR(fs.st_mode) &&
              holds("folder/inside.txt", "inside\n"),
          "over a folder: refused, the folder untouched");

    /* A reader meanwhile: the name is never missing, never short. Its counts are in shared
     * memory, read once it is stopped. */
    static const char a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
    static const char b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n";
    write_file("busy.txt", a);
    volatile long *v = mmap(NULL, 3 * sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t reader = v == MAP_FAILED ? -1 : fork();
    if (reader < 0) {
        CHECK(0, "a reader process (mmap, fork)");
    } else if (reader == 0) {
        char got[256];
        for (;;) {
            int fd = open("busy.txt", O_RDONLY);
            if (fd < 0) {
                v[1]++;
            } else {
                ssize_t n = read(fd, got, sizeof got);
                close(fd);
                if (n != (ssize_t)strlen(a) || (memcmp(got, a, (size_t)n) != 0 && memcmp(got, b, (size_t)n) != 0))
                    v[2]++;
            }
            v[0]++;
        }
    } else {
        int commits = 0;
        for (int i = 0; i < 2000; i++)
            commits += write_file("busy.txt", i & 1 ? a : b) == 0;
        kill(reader, SIGKILL);
        waitpid(reader, NULL, 0);
        printf("  %s: %d commits; the reader opened the name %ld times: %ld missing, %ld short or mixed\n", way,
               commits, v[0], v[1], v[2]);
        CHECK(commits == 2000 && v[1] == 0 && v[2] == 0, "a reader meanwhile never finds the name missing or short");
    }
    if (v != MAP_FAILED)
        munmap((void *)v, 3 * sizeof(long));
    CHECK(temporaries(".") == 0 && temporaries("folder") == 0, "no temporary file left");
#undef CHECK
}

/* A tool killed while it writes: in a child that leaves SIGINT, SIGTERM and SIGHUP at their
 * default, a file open under its temporary name and a signal -> the child dies of that signal
 * and no temporary file is left (a reader's review found trace.json.tmp.<pid> left by 13 of 78
 * timed kills). With the tool's own handler for the signal, outfile does not take it over. */
static void killed_while_writing(const char *way, int sig, int own_handler)
{
    char what[256];
    pid_t pid = fork();
    if (pid == 0) {
        signal(sig, own_handler ? SIG_IGN : SIG_DFL); /* whatever the test's caller left it at */
        struct outfile o;
        char err[512];
        int rc = derived ? outfile_open(&o, ".", "killed.txt", err, sizeof err)
                         : outfile_open_path(&o, "killed.txt", err, sizeof err);
        if (rc != 0)
            _exit(3);
        fputs("half", o.f);
        fflush(o.f);
        raise(sig);
        outfile_abort(&o);
        _exit(own_handler ? 0 : 4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    snprintf(what, sizeof what, "%s: killed by signal %d while writing%s: %s", way, sig,
             own_handler ? " (the tool ignores it)" : "", own_handler ? "left to the tool" : "dies of it");
    check(own_handler ? WIFEXITED(status) && WEXITSTATUS(status) == 0 : WIFSIGNALED(status) && WTERMSIG(status) == sig,
          what);
    snprintf(what, sizeof what, "%s: killed by signal %d while writing: no temporary file left, no file under the name",
             way, sig);
    check(temporaries(".") == 0 && access("killed.txt", F_OK) != 0, what);
}

int main(int argc, char **argv)
{
    if (argc != 2 || chdir(argv[1]) != 0 || mkdir("renamed", 0755) != 0 || mkdir("exchanged", 0755) != 0)
        return 2;
    if (chdir("renamed") != 0)
        return 2;
    /* First, before this process opens a file of its own (and sets the handlers its children
     * would inherit). */
    derived = 0;
    killed_while_writing("by path", SIGTERM, 0);
    killed_while_writing("by path", SIGINT, 0);
    killed_while_writing("by path", SIGTERM, 1);
    derived = 1;
    killed_while_writing("derived output", SIGHUP, 0);
    derived = 0;
    run_all("by path (renamed over)");
    if (chdir("../exchanged") != 0)
        return 2;
    derived = 1;
    run_all("derived output (exchanged)");
    return failed;
}
