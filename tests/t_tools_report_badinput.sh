#!/usr/bin/env bash
# t_tools_report_badinput: the readers perfscope-report OUT and matrix add (counters, profile.json,
# cases file, options, llama-bench output) on truncated, empty, garbage and hostile input
# (tests/report_badinput.py). $TOOLS/perfscope-report: named "tools" so `make test-asan` runs it
# under ASan/UBSan.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
exec python3 "$ROOT/tests/report_badinput.py" "$TOOL"
