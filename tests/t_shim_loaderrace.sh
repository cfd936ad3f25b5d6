#!/usr/bin/env bash
# t_shim_loaderrace: libunwind, loaded at a process's first sample (preload/unwlib.c), is mapped
# from its own file even while the target re-points the low descriptor numbers with dup2
# (tests/targets/r_loaderrace.c: a thread dup2()s a small file onto 3..5 and closes them, over
# and over; the loader opens libunwind at the lowest free number, and a dup2 onto it before the
# loader's mmap had the loader map the target's file: "file too short", a segment not mapped, or
# its close then closed the loader's descriptor, in 6 of 20 runs without the handshake of
# preload/shimload.c and 3 of 20 with a one-sided check). Each of 10 runs at 997 Hz must exit 0
# as without the shim, with no "cannot load" in perfscope.log, and most samples walked by
# libunwind where the sample file holds records: the same target also breaks the shim's own file
# creation at times ("cannot create ...: Bad file descriptor", or the file's writes given up: the
# shim's older limit with low numbers a target re-points, docs/shim.md "Descriptors"), and then
# no sample reaches the writer, which loads libunwind after its first written one.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_loaderrace -pthread

python3 - <<'EOF2'
import json, os, re
from shimlib import *

def rounds(res, what):
    m = re.match(rb"rounds (\d+)\n$", res.stdout)
    check(res.rc == 0 and m is not None and int(m.group(1)) > 0,
          "%s: exit %s, output %r %r" % (what, res.rc, res.stdout, res.stderr[-300:]))

rounds(run([target("r_loaderrace"), "0.2"], plain_env(), what="r_loaderrace"), "r_loaderrace without the shim")
made = 0
for i in range(10):
    out, what = "out-%d" % i, "r_loaderrace under the shim (run %d)" % (i + 1)
    rounds(run([target("r_loaderrace"), "0.2"], shim_env(out, HZ=997, COUNTER_MS=0), timeout=30, what=what), what)
    log = open(os.path.join(out, "perfscope.log")).read() if os.path.exists(os.path.join(out, "perfscope.log")) else ""
    check("cannot load" not in log and "libunwind" not in log, "%s: perfscope.log:\n%s" % (what, log))
    bins = [f for f in os.listdir(out) if f.startswith("cpuprof.") and f.endswith(".bin")]
    if not bins or os.path.getsize(os.path.join(out, bins[0])) == 0:
        info("%s: the shim's sample file holds nothing (its older limit): the walk check is left out" % what)
        continue
    made += 1
    s = json.load(open(os.path.join(out, "meta.json"))).get("sampling", {})
    n, fp = s.get("samples", 0), s.get("samples_without_libunwind", 0)
    check(s.get("unwind") == "libunwind" and n >= 50 and fp < n / 2,
          "%s: unwind %r, %d samples, %d of them without libunwind" % (what, s.get("unwind"), n, fp))
check(made >= 3, "only %d of 10 runs made their sample file: the walk check lost its point" % made)
finish()
EOF2
