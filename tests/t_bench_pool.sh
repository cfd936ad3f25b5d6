#!/usr/bin/env bash
# t_bench_pool: make bench's thread pool measures its timed steps only (bench/threadpool.c, after
# its warm-up steps, which run but are not timed: the first steps measure where the scheduler
# places the threads, not the pool), and make bench reads that rate back (tests/bench_pool_check.py).
set -u
. "$ROOT/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 missing"
mkdir -p "$TBUILD"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror \
  -o "$TBUILD/threadpool" "$ROOT/bench/threadpool.c" || fail "cannot build bench/threadpool.c"
py_check pool "$ROOT/tests/bench_pool_check.py" "$TBUILD/threadpool" "$W"
checks_done
