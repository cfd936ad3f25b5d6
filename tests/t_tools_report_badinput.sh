#!/usr/bin/env bash
# t_tools_report_badinput: the readers perfscope-report OUT and matrix add (counters, profile.json,
# cases file, options, llama-bench output) on truncated, empty, garbage and hostile input
# (tests/report_badinput.py). Named "tools" so make test-asan runs it under ASan/UBSan.
set -u
tool=${TOOLS:?}/perfscope-report
[ -x "$tool" ] || { echo "$tool is not built (make $(basename "$TOOLS")/perfscope-report)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
exec python3 "$ROOT/tests/report_badinput.py" "$tool"
