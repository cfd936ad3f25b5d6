/* cmd.c: `perfscope-symbolize [--top N] [--trust-modified] [--progress-fd N] [--symfs DIR] OUT` and `perfscope symbolize ...`:
 * the command line into symbolize_run and one summary line. Shared by symbolize/main.c and the
 * front door (perfscope/main.c). It must never do the symbolizer's work itself. Exit status:
 * 0 done, 1 an output could not be written, 2 bad usage or nothing usable in OUT. */
#include "symbolize.h"
#include "version.h"

#include <stdlib.h>
#include <string.h>

#define SYMBOLIZE_USAGE "[--top N] [--trust-modified] [--progress-fd N] [--symfs DIR] OUT"

static int usage(const char *prog)
{
    fprintf(stderr, "%s: usage: %s " SYMBOLIZE_USAGE "\n", prog, prog);
    return SYMBOLIZE_BAD_INPUT;
}

int symbolize_cmd(const char *prog, int argc, char **argv)
{
    struct symbolize_opts o = {0};
    o.progress_fd = 2;
    const char *dir = NULL;
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("usage: %s " SYMBOLIZE_USAGE "\n"
               "Symbolizes the run folder OUT: OUT/profile.json, stacks.folded, profile.pb.gz, "
               "trace.json.\n"
               "  --top N           how many hot functions per group (default 50)\n"
               "  --trust-modified  use binaries changed since the run (normally refused)\n"
               "  --progress-fd N   the progress line on descriptor N when it is a terminal (default:\n"
               "                    stderr, when it is one; shown once symbolizing takes over a second)\n"
               "  --symfs DIR       copies of the mapped files under DIR, looked at first "
               "(default OUT/symfs when present)\n"
               "Separate debug info stored compressed (libc6-dbg) is kept inflated, by build id, under\n"
               "$PERFSCOPE_DEBUG_CACHE, else $XDG_CACHE_HOME/perfscope/debug or ~/.cache/perfscope/debug (=0: off).\n",
               prog);
        return 0;
    }
    if (argc == 1 && strcmp(argv[0], "--version") == 0) {
        printf("%s %s\n", prog, PERFSCOPE_VERSION);
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 100000)
                return usage(prog);
            o.top = (int)n;
        } else if (strcmp(argv[i], "--symfs") == 0 && i + 1 < argc && argv[i + 1][0]) {
            o.symfs = argv[++i];
        } else if (strcmp(argv[i], "--progress-fd") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1000000)
                return usage(prog);
            o.progress_fd = (int)n;
        } else if (strcmp(argv[i], "--trust-modified") == 0) {
            o.trust_modified = 1;
        } else if (argv[i][0] == '-' || dir) {
            return usage(prog);
        } else {
            dir = argv[i];
        }
    }
    if (!dir)
        return usage(prog);
    char err[1024];
    struct symbolize_result r;
    o.exiting = 1; /* the command's callers return from main with its status */
    int rc = symbolize_run(dir, &o, &r, err, sizeof err);
    if (rc != SYMBOLIZE_OK) {
        for (char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20)
                *c = '?';
        fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }
    printf("%s: %llu samples (%llu dropped) from %zu sample files in %zu groups, "
           "%zu modules, %.2f s -> %s/profile.json, stacks.folded, profile.pb.gz, trace.json\n",
           prog, r.samples, r.dropped, r.images, r.groups, r.modules, r.seconds, dir);
    return 0;
}
