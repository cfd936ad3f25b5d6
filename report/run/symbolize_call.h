/* symbolize_call.h: profile.json made fresh for the report by the symbolizer, run as its own
 * program (symbolize_call.c). It must never link the symbolizer's collection in, nor fail the
 * report: a symbolizer that is missing or fails is a note. */
#ifndef PERFSCOPE_REPORT_SYMBOLIZE_CALL_H
#define PERFSCOPE_REPORT_SYMBOLIZE_CALL_H

#include <stddef.h>

/* Makes sure dir/profile.json is newer than every input it is made from (newest_input_ns) by
 * running perfscope-symbolize (found beside this binary) when it is not. Returns 0 when a fresh
 * profile.json is there, -1 when not, with the reason in note ("perfscope-symbolize is not
 * built", its own error line, ...). */
int profile_ensure(const char *dir, long long newest_input_ns, char *note, size_t notelen);

#endif
