/* t_longname: one function whose name is 300 bytes long burns 0.4 CPU s inside a phase "work"
 * (perfscope.h), so the report's model, profile.json and run.json must keep that name whole and
 * only the terminal layout may cut it (t_tools_report_terminal). Prints "done". */
#include "burn.h"
#include "perfscope.h"
#include <stdio.h>

DEFINE_BURN_SINK
/* 300 bytes: */
DEFINE_BURN(a_function_whose_name_is_three_hundred_bytes_long_abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy_and_it_ends_here)

int main(void)
{
    perfscope_begin("work");
    a_function_whose_name_is_three_hundred_bytes_long_abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy_and_it_ends_here(0.4);
    perfscope_end("work", 10);
    printf("done\n");
    return 0;
}
