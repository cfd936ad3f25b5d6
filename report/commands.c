/* commands.c: the table of perfscope-report's subcommands (commands.h) and the run report's
 * own argument check. It must never hold a subcommand's work: one call each. */
#include "commands.h"
#include "report.h"
#include "ab/diff.h"
#include "ab/noise.h"
#include "ab/matrix.h"
#include "dump/dump.h"
#include "run/run.h"

#include <stdio.h>
#include <string.h>

int report_is_help(int argc, char **argv)
{
    return argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
}

int report_cmd_run(int argc, char **argv)
{
    /* --markdown before or after OUT: the markdown on a terminal too. */
    int markdown = 0;
    const char *dir = NULL;
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0)
            markdown = 1;
        else if (argv[i][0] == '-' || dir)
            bad = 1;
        else
            dir = argv[i];
    }
    if (bad || !dir) {
        if (strcmp(report_prog, "perfscope") == 0)
            report_fail("usage: perfscope report [--markdown] OUT");
        else
            report_fail("usage: perfscope-report [--markdown] OUT | diff ... | noise ... | matrix CASES.json ... | "
                        "dump samples|maps|phases|run FILE");
        return REPORT_BAD_INPUT;
    }
    return cmd_run(dir, markdown);
}

const struct report_command report_commands[] = {
    {"report", report_cmd_run, "[--markdown] OUT",
     "the report of one run folder: prints it (aligned tables on a terminal, the markdown with --markdown or "
     "when not a terminal), writes OUT/report.md, OUT/report.html and OUT/run.json"},
    {"diff", cmd_diff, "diff [--noise FILE [--case LABEL]] [--json] A... -- B...\n"
     "       diff --profiles [--json] [--html FILE] [--min-pp X] A... -- B...",
     "the A/B judgement of two sets of runs; with --profiles, which functions changed per phase "
     "(docs/diff.md)"},
    {"noise", cmd_noise, "noise NULL_MATRIX.json", "the noise floor from an A/A matrix (docs/diff.md)"},
    {"matrix", cmd_matrix,
     "matrix CASES.json --a NAME=DIR --b NAME=DIR [--order ABBA] [--timeout S] "
     "[--precheck wait|skip|off] [--only REGEX] [--noise FILE] [--out DIR] [--a-env K=V]... "
     "[--b-env K=V]... [--a-args \"...\"] [--b-args \"...\"] [--profile N]",
     "runs the cases of an A/B matrix and judges them (docs/matrix.md)"},
    {"dump", cmd_dump, "dump samples FILE | maps FILE [HEXADDR@NS...] | phases FILE [NS...] | run DIR",
     "a reader's view of one file of a run folder, or of the run"},
};
const unsigned report_ncommands = sizeof report_commands / sizeof report_commands[0];

const struct report_command *report_command_find(const char *name)
{
    for (unsigned i = 0; i < report_ncommands; i++)
        if (strcmp(report_commands[i].name, name) == 0)
            return &report_commands[i];
    return NULL;
}
