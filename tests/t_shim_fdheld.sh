#!/usr/bin/env bash
# t_shim_fdheld: the shim's threads keep the files they use again and again open (docs/shim.md,
# "The shim's descriptors"), so that a target thread opening a file gets the number it would
# get without the shim.
# - spy_open.so, preloaded before the shim, sees the shim's threads' calls to open: on t_burn
#   (3.5 s, counters every 100 ms), none after the first 1.5 s (at most 2: a maps snapshot).
#   The spy must have seen the writer create the sample file (else it saw nothing). (Before: 41
#   in 2 s: /proc/<pid>/statm 20, cpuprof.<pid>.bin 9, counters.jsonl 6, /proc/self/stat 4,
#   the thread's comm 2; r_fdnum's two opens 100 ms in got 3 and 5 in 5 of 200 runs.)
# - r_heldswap puts files of its own on the shim's kept descriptors (the sample file's and
#   counters.jsonl's) with a raw dup3, past the wrappers: nothing is written into them, the
#   shim logs it and goes on writing its own files (samples and counters lines after the swap).
# - r_heldswap vfork: a vfork child's dup2 onto the sample file's kept descriptor leaves the
#   parent's as they were (one descriptor naming the file; before, the child's dup2 made the
#   parent forget its own, left open, and open another: 2), and the number is the child's to use
#   (dup2 from it, close it: before, EBADF in the child).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_burn
build_target r_heldswap
build_lib spy_open

python3 - <<'EOF2'
import glob, json, os
import samples
from shimlib import *

# ---- no file opened again and again --------------------------------------------------------
spy = os.path.abspath("spy.out")
env = shim_env("out-spy", LD_PRELOAD=target("spy_open.so") + ":" + SHIM)
env["SPY_OPEN_OUT"] = spy
res = run([target("t_burn"), "3.5", os.path.abspath("burn.jsonl"), "spy"], env, what="t_burn under spy_open")
expect_ok(res, "t_burn under spy_open")
recs = []
for line in open(spy) if os.path.exists(spy) else []:
    t, _, path = line.rstrip("\n").partition(" ")
    recs.append((int(t), path))
check(any(p.endswith("/cpuprof.%d.bin" % res.pid) for _, p in recs),
      "spy_open.so did not see the writer create cpuprof.%d.bin: it sees nothing (%d calls)" % (res.pid, len(recs)))
late = [(round((t - recs[0][0]) / 1e9, 3), p) for t, p in recs if t - recs[0][0] > 1.5e9] if recs else []
print("# spy: %d opens by the shim's threads in all, %d after 1.5 s: %r" % (len(recs), len(late), late[:10]))
check(len(late) <= 2, "the shim's threads opened %d files after the first 1.5 s of a 3.5 s run (at most 2): %r"
      % (len(late), late[:12]))

# ---- kept descriptors replaced past the wrappers --------------------------------------------
res = run([target("r_heldswap"), os.path.abspath("victim-")], shim_env("out-swap", HZ=199), what="r_heldswap")
expect_ok(res, "r_heldswap")
lines = res.stdout.decode().splitlines()
head = lines[0].split() if lines else []
require(len(head) == 4 and head[0] == "swapped", "r_heldswap: output %r" % res.stdout)
swapped, at = int(head[1]), int(head[3])
check(swapped >= 2, "r_heldswap found %d kept descriptors of the sample file and counters.jsonl (2 wanted)" % swapped)
for line in lines[1:]:
    _, n, size = line.split()
    check(size == "0", "r_heldswap: the shim wrote %s bytes into the target's file victim-%s, put on its kept descriptor"
          % (size, n))
files = samples.bin_files("out-swap")
require(res.pid in files, "r_heldswap: no cpuprof.%d.bin" % res.pid)
sf = samples.read_samples(files[res.pid][0][1] + ".bin")
after = [s for s in sf.samples if s.t > at]
print("# r_heldswap: %d swapped, %d samples, %d after the swap" % (swapped, len(sf.samples), len(after)))
check(len(after) >= 0.5 * 1.5 * 199, "r_heldswap: %d samples after the swap for 1.5 s at 199 Hz" % len(after))
counters = samples.read_jsonl(os.path.join("out-swap", "counters.jsonl"))
check(sum(1 for c in counters if c.get("t_ns", 0) > at) >= 5,
      "r_heldswap: %d counters lines after the swap" % sum(1 for c in counters if c.get("t_ns", 0) > at))
log = open(os.path.join("out-swap", "perfscope.log")).read()
check("replaced behind the shim's wrappers" in log, "r_heldswap: perfscope.log says nothing of it:\n%s" % log)

res = run([target("r_heldswap"), "vfork"], shim_env("out-vfork", HZ=199), what="r_heldswap vfork")
expect_ok(res, "r_heldswap vfork")
words = res.stdout.decode().split()
require(len(words) == 4 and words[0] == "vfork", "r_heldswap vfork: output %r" % res.stdout)
print("# r_heldswap vfork: descriptors naming the sample file %s before, %s after; the child exited %s"
      % (words[1], words[2], words[3]))
check(words[1] == "1" and words[2] == "1", "r_heldswap vfork: descriptors naming the sample file: %s before the vfork "
      "child's dup2, %s after (1 and 1 wanted)" % (words[1], words[2]))
check(words[3] == "0", "r_heldswap vfork: the child could not use the number it dup2'd onto (exit %s)" % words[3])
finish()
EOF2
