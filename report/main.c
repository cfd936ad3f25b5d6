/* main.c: perfscope-report's entry point: which subcommand, and nothing else here; each one
 * parses its own arguments in its own folder (run/cmd_run.c, ab/diff.c, ab/noise.c,
 * ab/matrix.c, dump/dump.c). It must never exit other than 0 (done), 2 (bad input or usage,
 * one line on stderr), or 130 (matrix interrupted by SIGINT/SIGTERM, its finished cases kept). */
#include "report.h"
#include "ab/diff.h"
#include "ab/noise.h"
#include "ab/matrix.h"
#include "dump/dump.h"
#include "run/run.h"

#include <string.h>

static int usage(void)
{
    report_fail("usage: perfscope-report OUT | diff ... | noise ... | matrix CASES.json ... | "
                "dump samples|maps|phases|run FILE");
    return REPORT_BAD_INPUT;
}

/* perfscope-report OUT: the report of one run (argv after the program's name). */
static int report_run(int argc, char **argv)
{
    if (argc != 1 || argv[0][0] == '-')
        return usage();
    return cmd_run(argv[0]);
}

static const struct {
    const char *name;
    int (*cmd)(int argc, char **argv); /* argv after the subcommand's name */
} subcommands[] = {
    {"dump", cmd_dump},
    {"diff", cmd_diff},
    {"noise", cmd_noise},
    {"matrix", cmd_matrix},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].cmd(argc - 2, argv + 2);
    return report_run(argc - 1, argv + 1);
}
