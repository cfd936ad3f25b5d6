#!/usr/bin/env bash
# t_shim_phases: phase boundaries from the markers file, and samples attributed to them.
# The target appends its own marker lines (some with t=, some without) to an existing, empty
# markers file and burns CPU in a distinct function in each phase (one phase nested in another).
# - phases.jsonl: exactly the 8 boundaries, in order, source "file", with their attributes and
#   a counters object; a boundary with t= has exactly that t_ns; one without lands within 5 ms
#   after the write.
# - every sample in a phase (by its time, innermost phase) has frame 0 in that phase's function,
#   for >= 95% of the phase's samples; the same for samples outside every phase.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_phases
hz=199
if perf_events_allowed; then hz=997; fi

python3 - "$hz" <<'EOF'
import collections, json, os, sys
import samples
from shimlib import *

hz = int(sys.argv[1])
exe = target("t_phases")
os.mkdir("out")
markers = os.path.abspath("out/markers")
open(markers, "w").close()
res = run([exe, markers, "report.json"], shim_env("out", HZ=hz, LLMPERFSCOPE_MARKERS=markers), what="t_phases")
expect_ok(res, "t_phases")
check(res.stdout == b"" and res.stderr == b"", "output changed: %r %r" % (res.stdout[:200], res.stderr[:300]))
rep = json.load(open("report.json"))
phases = samples.read_phases("out/phases.jsonl")
for p in phases:
    info("phase %s" % json.dumps({k: v for k, v in p.items() if k != "counters"}))

want = [("alpha", "begin"), ("alpha", "end"), ("beta", "begin"), ("beta", "end"), ("req", "begin"),
        ("gamma", "begin"), ("gamma", "end"), ("req", "end")]
got = [(p["name"], p["event"]) for p in phases]
require(got == want, "phases.jsonl boundaries %s, expected %s" % (got, want))
for p in phases:
    check(p["source"] == "file", "boundary %s %s: source %r, expected \"file\"" % (p["name"], p["event"], p["source"]))
    check(isinstance(p.get("counters"), dict), "boundary %s %s: no counters object" % (p["name"], p["event"]))
    check(p["t_ns"] >= res.t0 and p["t_ns"] <= res.t1, "boundary %s %s: t_ns %d outside the run"
          % (p["name"], p["event"], p["t_ns"]))
B = {(p["name"], p["event"]): p for p in phases}

# t= boundaries: exact.
for name, key in (("alpha", "alpha"), ("req", "req"), ("gamma", "gamma")):
    for i, ev in enumerate(("begin", "end")):
        check(B[(name, ev)]["t_ns"] == rep[key][i],
              "%s %s: t_ns %d, the marker said t=%d" % (name, ev, B[(name, ev)]["t_ns"], rep[key][i]))
# no t=: when the line was read, within 5 ms of its write.
for ev, key in (("begin", "beta_begin"), ("end", "beta_end")):
    t = B[("beta", ev)]["t_ns"]
    w0, w1 = rep[key]
    info("beta %s: boundary %.3f ms after the write" % (ev, (t - w1) / 1e6))
    check(w0 <= t <= w1 + 5_000_000,
          "beta %s: boundary at %d, line written in [%d, %d]: %.3f ms after the write (limit 5 ms)"
          % (ev, t, w0, w1, (t - w1) / 1e6))


def attr(name, ev, key):
    v = B[(name, ev)]["attrs"].get(key)
    return None if v is None else str(v)


check(attr("alpha", "end", "tokens") == "512", "alpha end: tokens %r, expected 512" % attr("alpha", "end", "tokens"))
check(attr("beta", "end", "tokens") == "128" and attr("beta", "end", "request") == "7",
      "beta end: attrs %r, expected tokens=128 request=7" % B[("beta", "end")]["attrs"])
check(attr("gamma", "end", "tokens") == "3", "gamma end: tokens %r" % attr("gamma", "end", "tokens"))
check(attr("alpha", "begin", "tokens") is None, "alpha begin has tokens %r" % attr("alpha", "begin", "tokens"))

# Samples by phase (innermost open phase at the sample's time).
ivs = samples.intervals(phases)
fns = {"alpha": "burn_alpha", "beta": "burn_beta", "gamma": "burn_gamma", "req": "burn_delta", None: "burn_none"}
ranges = samples.runtime_ranges(exe, "burn_alpha", rep["fn"]["burn_alpha"], list(rep["fn"]))
files = samples.bin_files("out")
require(res.pid in files, "no cpuprof.%d.bin in %s" % (res.pid, sorted(os.listdir("out"))))
sf = samples.read_samples(files[res.pid][0][1] + ".bin")
per = collections.defaultdict(lambda: [0, 0])
for s in sf.samples:
    inner = None
    best = -1
    for name, b, e, d in ivs:
        if b <= s.t < e and b > best:
            inner, best = name, b
    lo, hi = ranges[fns[inner]]
    per[inner][0] += 1
    if s.frames and lo <= s.frames[0] < hi:
        per[inner][1] += 1
cpu = {"alpha": 0.3, "beta": 0.3, "gamma": 0.2, "req": 0.15, None: 0.2}  # burn_none: 4 calls of 0.05 s
for name, fn in fns.items():
    n, ok = per[name]
    info("phase %-6s: %4d samples, %4d in %s" % (name, n, ok, fn))
    if n < 0.8 * cpu[name] * hz:
        fail("phase %s: %d samples for about %.2f s of CPU at %d Hz" % (name, n, cpu[name], hz))
    elif ok < 0.95 * n:
        fail("phase %s: %d of %d samples in %s (< 95%%)" % (name, ok, n, fn))
finish()
EOF
