#!/usr/bin/env bash
# t_tools_judge: `perfscope-report diff` and `noise` (report/judge.c, stats.c, diff.c,
# noise.c) on run.json files made by tests/judge_check.py: a table of cases worked out by hand
# from compare.py's rules, permutation p-values and the too-few-runs warning, hostile files, and
# an exactness check against the reference harness's own compare.py (extracted from
# ../shared/reference at test time; that part is skipped with a message when the file is
# absent). $TOOLS/perfscope-report: named "tools" so `make test-asan` runs it against the
# sanitizer build too. Never writes outside its scratch folder (the cwd).
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
exec python3 "$ROOT/tests/judge_check.py" "$TOOL" "$ROOT/../shared/reference/000_ebe582f57eb4446d.txt"
