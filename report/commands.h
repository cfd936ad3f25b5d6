/* commands.h: perfscope-report's subcommands in one table, shared by its main (report/main.c)
 * and the front door (perfscope/main.c), with each one's usage text for --help. It must never
 * parse a subcommand's own arguments: that is each subcommand's, in its own folder. */
#ifndef PERFSCOPE_REPORT_COMMANDS_H
#define PERFSCOPE_REPORT_COMMANDS_H

struct report_command {
    const char *name;               /* "report" is the run report: perfscope-report OUT */
    int (*cmd)(int argc, char **argv); /* argv after the subcommand's name */
    const char *usage;              /* the synopsis, after the program's name */
    const char *what;               /* one line: what it does */
};

extern const struct report_command report_commands[];
extern const unsigned report_ncommands;

/* The entry named name, or NULL. */
const struct report_command *report_command_find(const char *name);

/* Whether argv[0] (argc > 0) asks for help: --help or -h. */
int report_is_help(int argc, char **argv);

/* The run report, `perfscope-report OUT` (argv after the program's or subcommand's name). */
int report_cmd_run(int argc, char **argv);

#endif
