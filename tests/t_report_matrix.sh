#!/usr/bin/env bash
# t_report_matrix: perfscope-report matrix on two scripted builds with a known speed difference
# (tests/report_matrix.py): tradeoff and improvement verdicts, A against A neutral, a failing and
# a timed-out arm, a missing model, table.md, SIGINT. Run from an empty folder with ROOT set.
set -u
. "$ROOT/tests/lib.sh"
need_shim
tool=$BUILD/perfscope-report
[ -x "$tool" ] || fail "$tool is not built (make)"
command -v python3 >/dev/null || skip "python3 missing"
exec python3 "$ROOT/tests/report_matrix.py" "$tool"
