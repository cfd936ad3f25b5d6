/* main.c: perfscope-report's entry point; one function per subcommand, nothing else here.
 * It must never exit other than 0 (done), 2 (bad input or usage, one line on stderr), or 130
 * (matrix interrupted by SIGINT/SIGTERM, its finished cases kept). */
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

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "diff") == 0)
        return cmd_diff(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "noise") == 0)
        return cmd_noise(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "matrix") == 0)
        return cmd_matrix(argc - 2, argv + 2);
    if (argc != 2 || argv[1][0] == '-')
        return usage();
    return cmd_run(argv[1]);
}
