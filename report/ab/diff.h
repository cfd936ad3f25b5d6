/* diff.h: `perfscope-report diff [--noise FILE [--case LABEL]] [--json] A... -- B...`, the A/B
 * judgement of run folders (judge.c) with the significance figures (stats.c) and the warnings
 * (warn.c) beside it; `diff --profiles ...` is the function-level diff (fdiff.h). It
 * must never judge from a run it could not read: bad input is one line on stderr and exit 2;
 * a raw run folder that cannot be summarized counts as a failed run, as compare.py counts one. */
#ifndef PERFSCOPE_DIFF_H
#define PERFSCOPE_DIFF_H

int cmd_diff(int argc, char **argv);

#endif
