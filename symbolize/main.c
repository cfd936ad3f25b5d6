/* main.c: perfscope-symbolize [--top N] [--trust-modified] OUT. A thin wrapper of symbolize_run:
 * it parses the command line and prints one summary line. Exit status: 0 done, 1 an output could
 * not be written, 2 bad usage or nothing usable in OUT (one line on stderr). */
#include "symbolize.h"

#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "perfscope-symbolize: usage: perfscope-symbolize [--top N] [--trust-modified] OUT\n");
    return SYMBOLIZE_BAD_INPUT;
}

int main(int argc, char **argv)
{
    struct symbolize_opts o = {0};
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--top") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 100000)
                return usage();
            o.top = (int)n;
        } else if (strcmp(argv[i], "--trust-modified") == 0) {
            o.trust_modified = 1;
        } else if (argv[i][0] == '-' || dir) {
            return usage();
        } else {
            dir = argv[i];
        }
    }
    if (!dir)
        return usage();
    char err[1024];
    struct symbolize_result r;
    int rc = symbolize_run(dir, &o, &r, err, sizeof err);
    if (rc != SYMBOLIZE_OK) {
        for (char *c = err; *c; c++)
            if ((unsigned char)*c < 0x20)
                *c = '?';
        fprintf(stderr, "perfscope-symbolize: %s\n", err);
        return rc;
    }
    printf("perfscope-symbolize: %llu samples (%llu dropped) from %zu sample files in %zu groups, "
           "%zu modules, %.2f s -> %s/profile.json, stacks.folded, profile.pb.gz, trace.json\n",
           r.samples, r.dropped, r.images, r.groups, r.modules, r.seconds, dir);
    return 0;
}
