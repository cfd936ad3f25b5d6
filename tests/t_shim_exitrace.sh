#!/usr/bin/env bash
# t_shim_exitrace: the samples a process's way out counts are the samples its file holds, while
# other threads are still on the CPU. tests/targets/r_exitrace.c spins three threads for good
# and leaves from main after 0.2 s of CPU by return, _exit or SIGTERM; at 997 Hz, 6 runs each.
# The exit line's sampling.samples, meta.json's and the records in the sample file must agree
# (before the record was closed at the way out: 1-3 more counted than written in most _exit and
# SIGTERM runs). The same with PERFSCOPE_UNWIND=kernel where perf events are allowed, 12 runs of
# each way: there the writer goes on taking the kernel's records unless the way out's last drain
# stops it (before it did, meta.json counted fewer than the file in 8 of 150 _exit runs).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_exitrace

python3 - "$(perf_events_allowed && echo 1)" <<'EOF2'
import json, os, sys
import samples
from shimlib import *

arms = [(None, 6)] + ([("kernel", 12)] if sys.argv[1:] == ["1"] else [])
for (unwind, runs), (way, rc) in [(a, w) for a in arms for w in (("return", 0), ("_exit", 0), ("term", -15))]:
    for i in range(runs):
        out = "out-%s-%s-%d" % (unwind or "default", way.strip("_"), i)
        what = "r_exitrace %s%s (run %d)" % (way, " --unwind kernel" if unwind else "", i + 1)
        res = run([target("r_exitrace"), way, "0.2"], shim_env(out, HZ=997, UNWIND=unwind), what=what)
        if not check(res.rc == rc, "%s: rc %r, want %r" % (what, res.rc, rc)):
            continue
        ex = [r for r in load_json_lines(os.path.join(out, "procs.jsonl"))
              if r["pid"] == res.pid and r["event"] == "exit"]
        if not check(len(ex) == 1, "%s: exit lines %s" % (what, ex)):
            continue
        said = ex[0].get("sampling", {}).get("samples", 0)
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f).get("sampling", {}).get("samples", 0)
        files = samples.bin_files(out).get(res.pid, [])
        if not check(len(files) == 1, "%s: sample files %s" % (what, files)):
            continue
        held = len(samples.read_samples(files[0][1] + ".bin").samples)
        check(held > 100, "%s: %d samples for 0.8 s of CPU at 997 Hz" % (what, held))
        check(said == held and meta == held, "%s: the file holds %d records, the exit line says %d, meta.json %d"
              % (what, held, said, meta))

finish()
EOF2
