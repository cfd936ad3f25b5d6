#!/usr/bin/env bash
# t_shim_review_fds: regressions from a review of the shim (docs/shim.md: the shim never changes the
# target's behaviour, output, exit status, errno, signals or descriptors), the descriptors. Each
# case runs its r_* target without and with the shim (PERFSCOPE_HZ=997) and compares (harness:
# tests/reviewlib.py); cases numbered as in the review:
#  8 closerange   close_range(5, 3, 0) is -1 EINVAL
# 10 fdnum        the first open() in main returns 3 (libunwind's pipe is not at 3/4)
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review_fds.sh 8`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_closerange r_fdnum; do
    build_target "$t"
done

python3 - "$@" <<'EOF'
import os
import sys
from reviewlib import *
from shimlib import target, plain_env, sig_name


def c_closerange():
    exe = target("r_closerange")
    base = run([exe], plain_env(), what="r_closerange")
    need(base.rc == 0 and base.stdout.startswith(b"close_range(5, 3, 0) = -1 errno=Invalid argument\n"),
         "r_closerange without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-closerange"), what="r_closerange")
    same(base, res, "r_closerange")


def c_fdnum():
    exe = target("r_fdnum")
    base = run([exe], plain_env(), what="r_fdnum")
    need(base.rc == 0 and base.stdout == b"first open() in main returned 3, second 4\n",
         "r_fdnum without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-fdnum", UNWIND=None), what="r_fdnum")
    same(base, res, "r_fdnum (descriptor numbers)")


CASES = [(8, "closerange", c_closerange),
         (10, "fdnum", c_fdnum)]
run_cases(CASES, sys.argv[1:])
EOF
