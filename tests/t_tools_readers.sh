#!/usr/bin/env bash
# t_tools_readers: the sample, maps and phases readers (symbolize/) and the first report, on
# synthetic good and hostile files (tests/readers_check.py). $TOOLS/perfscope-report: named
# "tools" so `make test-asan` runs it against the sanitizer build too. Never writes outside its
# scratch folder (the cwd).
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
exec python3 "$ROOT/tests/readers_check.py" "$TOOL"
