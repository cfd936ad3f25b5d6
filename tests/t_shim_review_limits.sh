#!/usr/bin/env bash
# t_shim_review_limits: regressions from a review of the shim (docs/shim.md: the shim never changes
# the target's behaviour, output, exit status, errno, signals or descriptors), under resource
# limits. Each case runs its r_* target without and with the shim (PERFSCOPE_HZ=997) and compares
# (harness: tests/reviewlib.py); cases numbered as in the review:
#  1 smallstack   a thread with a 32 KiB stack, ~17-20 KiB of it in use while sampled, runs on
# 14 fsize        RLIMIT_FSIZE big enough for the target's own file: no SIGXFSZ (5 runs)
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review_limits.sh 1`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_smallstk r_fsz; do
    build_target "$t"
done

python3 - "$@" <<'EOF'
import os, resource
import sys
from reviewlib import *
from shimlib import target, plain_env, sig_name


def c_smallstack():
    exe = target("r_smallstk")
    for use in (17000, 18500, 20000):
        what = "r_smallstk %d" % use
        base = run([exe, str(use)], plain_env(), what=what)
        need(base.rc == 0, "%s without the shim: %s" % (what, sig_name(base.rc)))
        res = run([exe, str(use)], senv("out-smallstk-%d" % use), what=what)
        same(base, res, what)


def c_fsize():
    exe = target("r_fsz")
    limit = 64 * 1024

    def lim():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    base = run([exe, os.path.abspath("fsz-base.dat")], plain_env(), preexec_fn=lim, what="r_fsz")
    need(base.rc == 0 and base.stdout == b"wrote 32768 bytes\n", "r_fsz without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    for k in range(5):
        own = os.path.abspath("fsz-%d.dat" % k)
        what = "r_fsz under RLIMIT_FSIZE %d (run %d of 5)" % (limit, k + 1)
        res = run([exe, own], senv("out-fsz-%d" % k), preexec_fn=lim, what=what)
        same(base, res, what)
        need(os.path.getsize(own) == 32768, "%s: the target's own file holds %d bytes" % (what, os.path.getsize(own)))


CASES = [(1, "smallstack", c_smallstack),
         (14, "fsize", c_fsize)]
run_cases(CASES, sys.argv[1:])
EOF
