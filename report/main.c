/* main.c: perfscope-report's entry point: which subcommand (the table in commands.c), --help and
 * --version, and nothing else here; each one parses its own arguments in its own folder
 * (run/cmd_run.c, ab/diff.c, ab/noise.c, ab/matrix.c, dump/dump.c). It must never exit other
 * than 0 (done), 2 (bad input or usage, one line on stderr), or 130 (matrix interrupted by
 * SIGINT/SIGTERM, its finished cases kept). */
#include "commands.h"
#include "report.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

static int help(const struct report_command *c)
{
    if (c) {
        printf("usage: perfscope-report %s\n%s\n", c->usage, c->what);
        return 0;
    }
    printf("usage: perfscope-report OUT | diff ... | noise ... | matrix CASES.json ... | dump ...\n\n");
    for (unsigned i = 0; i < report_ncommands; i++)
        printf("  perfscope-report %s\n      %s\n", report_commands[i].usage, report_commands[i].what);
    printf("\n`perfscope-report CMD --help` for one; `perfscope help` for the front door.\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("perfscope-report %s\n", PERFSCOPE_VERSION);
        return 0;
    }
    if (report_is_help(argc - 1, argv + 1))
        return help(NULL);
    const struct report_command *c = argc >= 2 ? report_command_find(argv[1]) : NULL;
    if (c && strcmp(c->name, "report") != 0) {
        if (report_is_help(argc - 2, argv + 2))
            return help(c);
        return c->cmd(argc - 2, argv + 2);
    }
    return report_cmd_run(argc - 1, argv + 1);
}
