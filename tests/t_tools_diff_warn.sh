#!/usr/bin/env bash
# t_tools_diff_warn: the warnings of $TOOLS/perfscope-report diff beside compare.py's verdict
# (tests/diff_warn_check.py): too few runs, no verdict, no throughput, --noise keys; llama-bench's
# markdown table. Named "tools" so `make test-asan` runs it against the sanitizer build.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
exec python3 "$ROOT/tests/diff_warn_check.py" "$TOOL"
