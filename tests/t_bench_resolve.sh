#!/usr/bin/env bash
# t_bench_resolve: bench/resolve.py's statistics (make bench's resolved 199 Hz cost) on simulated
# pairs whose cost and order effect are known (tests/bench_resolve_check.py): the figure is
# unbiased where the order groups differ in size, its interval covers the cost ~95% of the time,
# the orders are drawn half each way and shuffled, the verdicts at their bounds.
set -u
. "$ROOT/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 missing"
py_check resolve "$ROOT/tests/bench_resolve_check.py"
checks_done
