#!/usr/bin/env bash
# t_shim_forklock: a fork made while another thread's handler holds libunwind's locks (its
# cache lock, taken around a lookup of an address not seen before; preload/dlbusy.h). The
# child has only the forking thread, and its copy of such a lock stayed locked for good: the
# child's first libunwind walk in its handler waited on it forever (the child never exited).
# Now the fork waits for the walks under way. tests/targets/r_forklock.c makes the timing
# certain: libunwind's call to the program's exported dl_iterate_phdr, on the worker's
# alternate signal stack, asks main to fork and waits up to 50 ms for it. The child must exit 0
# within 10 s, with the fast tracer and step by step, and libunwind must stay on (the fork's
# wait is bounded: past 100 ms it would be off for good, which the log would say).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_forklock -rdynamic -pthread

python3 - <<'EOF2'
import os, subprocess
from shimlib import *

argv = [target("r_forklock")]
base = subprocess.run(argv + ["1"], env=plain_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
require(base.returncode == 3 and base.stdout == b"no walk seen\n", "without the shim: %r" % (base,))
for fast in ("1", "0"):
    what = "UNWIND_FAST=%s" % fast
    out = "out-%s" % fast
    res = subprocess.run(argv, env=shim_env(out, HZ=997, UNWIND="libunwind", UNWIND_FAST=fast),
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    check(res.returncode == 0 and res.stdout == b"child exited 0\n", "%s: %r" % (what, res))
    with open(os.path.join(out, "perfscope.log")) as f:
        log = f.read()
    check("libunwind is off" not in log, "%s: libunwind was turned off: %r" % (what, log))

finish()
EOF2
