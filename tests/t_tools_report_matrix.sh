#!/usr/bin/env bash
# t_tools_report_matrix: $TOOLS/perfscope-report matrix on two scripted builds with a known speed
# difference (tests/report_matrix.py): tradeoff and improvement verdicts, A against A neutral, a
# failing and a timed-out arm, a missing model, table.md, --noise, SIGINT, --precheck skip. The
# arms run under the shim, $SHIM (the normal build): the matrix finds it beside itself, or, where
# $TOOLS holds no shim (the sanitizer build of `make test-asan`, "tools" in the name), through
# PERFSCOPE_SHIM.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
[ -e "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
exec python3 "$ROOT/tests/report_matrix.py" "$TOOL"
