#!/usr/bin/env bash
# t_shim_reference_env: the reference harness can use this shim unchanged. With only its
# variables (LLMPERFSCOPE_CPUPROF_OUT=<run dir>/cpuprof, LLMPERFSCOPE_CPUPROF_HZ=997; no
# PERFSCOPE_*), a run writes <run dir>/cpuprof.<pid>.bin and .maps; the reference reader's logic
# (cpuprof.py _read_samples and _load_maps, reimplemented) reads them: header hz 997, samples for
# the CPU time burnt, frame 0 resolved to the executable through the maps ranges.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_burn
hz=199
if perf_events_allowed; then hz=997; fi

python3 - "$hz" <<'EOF2'
import bisect, json, os, sys
import samples
from shimlib import *

hz = int(sys.argv[1])
run_dir = os.path.abspath("run")
os.mkdir(run_dir)
env = shim_env(None, LLMPERFSCOPE_CPUPROF_OUT=os.path.join(run_dir, "cpuprof"), LLMPERFSCOPE_CPUPROF_HZ=hz)
res = run([target("t_burn"), "0.3", os.path.abspath("report.json"), "ref"], env, what="t_burn")
expect_ok(res, "t_burn with the reference harness's variables")
check(res.stdout == b"" and res.stderr == b"", "output %r %r" % (res.stdout, res.stderr[:300]))
rep = samples.read_jsonl("report.json")[0]
path = os.path.join(run_dir, "cpuprof.%d.bin" % res.pid)
require(os.path.exists(path), "no %s; the run folder holds %s" % (path, sorted(os.listdir(run_dir))))
check(not os.path.exists("perfscope-out"), "the shim also wrote to its default folder perfscope-out")

got, dropped, rate = samples.reference_read_samples(path)
samples.check_reference_reader(path)
check(rate == hz, "header hz %d, LLMPERFSCOPE_CPUPROF_HZ was %d" % (rate, hz))


def load_maps(p):
    """cpuprof.py _load_maps, reimplemented: executable mappings with a path field, sorted."""
    ranges = []
    for line in open(p):
        parts = line.split(None, 5)
        if len(parts) == 6 and "x" in parts[1]:
            a, b = parts[0].split("-")
            ranges.append((int(a, 16), int(b, 16), int(parts[2], 16), parts[5].strip()))
    return sorted(ranges)


ranges = load_maps(path[:-4] + ".maps")
starts = [r[0] for r in ranges]
in_exe = 0
for t, tid, comm, frames in got:
    if not frames:
        continue
    i = bisect.bisect_right(starts, frames[0]) - 1
    if i >= 0 and frames[0] < ranges[i][1] and os.path.realpath(ranges[i][3]) == os.path.realpath(target("t_burn")):
        in_exe += 1
want = rep["cpu_ns"] / 1e9 * hz
info("%d samples (CPU x rate %.1f), %d dropped, %d with frame 0 in t_burn by the reference maps logic" % (len(got), want, dropped, in_exe))
check(len(got) >= 0.9 * want, "%d samples for %.3f s of CPU at %d Hz" % (len(got), rep["cpu_ns"] / 1e9, hz))
check(in_exe >= 0.9 * len(got), "only %d of %d samples resolve to t_burn through the reference maps logic" % (in_exe, len(got)))
finish()
EOF2
