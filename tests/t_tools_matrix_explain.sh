#!/usr/bin/env bash
# t_tools_matrix_explain: $TOOLS/perfscope-report matrix explaining itself (tests/matrix_explain.py
# over report_matrix.py's scripted builds): the default order and the too-few-runs warning,
# per-arm env and args, llama-bench's markdown table, the no-throughput, --noise and no-verdict
# warnings, --profile N. The arms run under $SHIM, as in t_tools_report_matrix.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
[ -e "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
exec python3 "$ROOT/tests/matrix_explain.py" "$TOOL"
