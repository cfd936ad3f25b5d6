#!/usr/bin/env bash
# t_shim_stacks: the sampled stacks are the real call chains, with either unwinder, cut at
# PERFSCOPE_MAX_FRAMES. t_deep burns in burn_leaf at the end of a 40-deep chain of distinct
# functions deep_0 .. deep_39 called from main. At 997 Hz (199 where perf events are refused):
# - PERFSCOPE_UNWIND=libunwind and =fp, default 64 frames: >= 95% of the samples in burn_leaf
#   read burn_leaf, deep_39, ..., deep_0, main (return addresses looked up at address - 1);
# - PERFSCOPE_MAX_FRAMES=8: the header says 8, no record has more than 8 frames, and the samples
#   in burn_leaf hold exactly its 8 innermost frames;
# - the same two with PERFSCOPE_UNWIND=kernel (the kernel's call chains), where perf events are
#   allowed.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_deep
hz=199
if perf_events_allowed; then hz=997; fi

python3 - "$hz" "$(perf_events_allowed && echo 1)" <<'EOF2'
import json, os, sys
import samples
from shimlib import *

hz = int(sys.argv[1])
exe = target("t_deep")
syms = samples.symbols(exe)
chain = ["burn_leaf"] + ["deep_%d" % i for i in range(39, -1, -1)] + ["main"]

arms = [("libunwind", None), ("fp", None), ("libunwind", 8), ("fp", 8)]
if sys.argv[2:] == ["1"]:
    arms += [("kernel", None), ("kernel", 8)]
for unwind, maxf in arms:
    what = "PERFSCOPE_UNWIND=%s PERFSCOPE_MAX_FRAMES=%s" % (unwind, maxf or "(default)")
    out = "out-%s-%s" % (unwind, maxf)
    res = run([exe, "report.json"], shim_env(out, HZ=hz, UNWIND=unwind, MAX_FRAMES=maxf), what=what)
    expect_ok(res, what)
    bias = json.load(open("report.json"))["burn_leaf"] - syms["burn_leaf"][0]
    ranges = sorted((v + bias, v + bias + size, name) for name, (v, size) in syms.items() if size)

    def name_of(addr):
        for lo, hi, name in ranges:
            if lo <= addr < hi:
                return name
        return None

    files = samples.bin_files(out)
    sf = samples.read_samples(files[res.pid][0][1] + ".bin")
    want_max = maxf or 64
    problems = []
    if sf.max_frames != want_max:
        problems.append("header max_frames %d, expected %d" % (sf.max_frames, want_max))
    too_deep = [s for s in sf.samples if len(s.frames) > want_max]
    if too_deep:
        problems.append("%d records with more than %d frames" % (len(too_deep), want_max))
    leaf = [s for s in sf.samples if s.frames and name_of(s.frames[0]) == "burn_leaf"]
    want = chain[:want_max]
    good = 0
    example = None
    for s in leaf:
        names = [name_of(s.frames[0])] + [name_of(a - 1) for a in s.frames[1:len(want)]]
        if names == want and (maxf is None or len(s.frames) == maxf):
            good += 1
        elif example is None:
            example = names
    info("%s: %d samples, %d in burn_leaf, %d with the whole expected chain (%d frames)"
         % (what, len(sf.samples), len(leaf), good, len(want)))
    if len(leaf) < 0.8 * 0.3 * hz:
        problems.append("only %d samples in burn_leaf for 0.3 s of CPU at %d Hz" % (len(leaf), hz))
    elif good < 0.95 * len(leaf):
        problems.append("%d of %d samples in burn_leaf have the chain %s..%s; e.g. %s"
                        % (good, len(leaf), want[0], want[-1], example))
    check(not problems, "%s: %s" % (what, "; ".join(problems)))
finish()
EOF2
