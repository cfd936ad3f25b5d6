/* main.c: `perfscope`, the front door (docs/record.md): `perfscope <command> [options]`,
 * `perfscope help [CMD]`, `perfscope --version`. Which command, its --help, and one call: record
 * and mark (report/record/), report, diff, noise, matrix, dump (perfscope-report's table,
 * report/commands.c) and symbolize (symbolize/cmd.c) run the very code of the other two tools.
 * It must never do a command's work itself. */
#include "commands.h"
#include "record/record.h"
#include "report.h"
#include "symbolize.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

static int symbolize_sub(int argc, char **argv)
{
    return symbolize_cmd("perfscope symbolize", argc, argv);
}

struct front_command {
    const char *name;
    int (*cmd)(int argc, char **argv);
    const char *usage, *what;
};

static const struct front_command own[] = {
    {"record", cmd_record, RECORD_USAGE, "runs CMD under the shim into OUT (default perfscope-out), then reports"},
    {"mark", cmd_mark, MARK_USAGE, "appends one phase marker, t= now, to $LLMPERFSCOPE_MARKERS or else $PERFSCOPE_MARKERS (a shell's way)"},
    {"symbolize", symbolize_sub, "symbolize [--top N] [--trust-modified] OUT",
     "OUT's samples into profile.json, stacks.folded, profile.pb.gz, trace.json"},
};

/* The command named name, from our own or perfscope-report's table; 0 when there is none. */
static int find(const char *name, struct front_command *c)
{
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(own[i].name, name) == 0) {
            *c = own[i];
            return 1;
        }
    const struct report_command *r = report_command_find(name);
    if (!r)
        return 0;
    *c = (struct front_command){r->name, r->cmd, r->usage, r->what};
    if (strcmp(r->name, "report") == 0)
        c->usage = "report [--markdown] OUT";
    return 1;
}

static int help(const char *name)
{
    struct front_command c;
    if (name) {
        if (!find(name, &c)) {
            report_fail("help: no command %s (perfscope help)", name);
            return REPORT_BAD_INPUT;
        }
        printf("usage: perfscope %s\n%s\n", c.usage, c.what);
        return 0;
    }
    printf("usage: perfscope <command> [options]   perfscope help [command]   perfscope --version\n\n");
    const char *order[] = {"record", "mark", "report", "symbolize", "diff", "noise", "matrix", "dump"};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (find(order[i], &c))
            printf("  %-10s %s\n", c.name, c.what);
    printf("\n`perfscope help CMD` or `perfscope CMD --help` for one command (docs/record.md).\n");
    return 0;
}

int main(int argc, char **argv)
{
    report_prog = "perfscope";
    if (argc < 2) {
        report_fail("usage: perfscope <command> [options] (perfscope help)");
        return REPORT_BAD_INPUT;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("perfscope %s\n", PERFSCOPE_VERSION);
        return 0;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return help(NULL);
    if (strcmp(name, "help") == 0)
        return help(argc > 2 ? argv[2] : NULL);
    struct front_command c;
    if (!find(name, &c)) {
        report_fail("no command %s (perfscope help)", name);
        return REPORT_BAD_INPUT;
    }
    if (report_is_help(argc - 2, argv + 2) && c.cmd != symbolize_sub)
        return help(c.name);
    return c.cmd(argc - 2, argv + 2);
}
