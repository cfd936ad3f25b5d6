#!/usr/bin/env bash
# t_bench_report: the verdicts bench/report.py writes under make bench's first tables, on made-up
# pairs (tests/bench_report_check.py): a cost that did not show is not measured, a figure within
# the noise of its target is not resolved and says nothing more.
set -u
. "$ROOT/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 missing"
py_check report "$ROOT/tests/bench_report_check.py"
checks_done
