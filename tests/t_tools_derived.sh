#!/usr/bin/env bash
# t_tools_derived: every tool gives the same derived figures for one run (format/runextent.c,
# format/phasegroups.c, format/counterline.c's counter_step): a phase begun and never ended
# ends where the run ends, and its wall time is the same in profile.json (the symbolizer),
# run.json (the report) and `dump run`, both for a run that exits (meta.json's end_ns) and for
# one killed with SIGKILL while idle (its last counter reading, after its last sample). Then
# trace.json's power track on a RAPL counter with a reading out of order and a real wrap: no
# step down is taken for a wrap unless it is one (the trace once gave megawatts).
# Named "tools" so `make test-asan` runs the tools under the sanitizers here too.
set -u
. "$ROOT/tests/lib.sh"
need_shim
: "${TOOLS:?}"
need_tool perfscope-report
need_tool perfscope-symbolize
command -v python3 >/dev/null || skip "python3 missing"
python=$(python3 -c 'import sys; print(sys.executable)')

python3 - "$TOOLS" "$python" <<'EOF2'
import json, os, re, shutil, signal, subprocess, sys, time
import samples
from checks import check, finish
from shimlib import *

tools, python = sys.argv[1], sys.argv[2]
report = os.path.join(tools, "perfscope-report")
symbolize = os.path.join(tools, "perfscope-symbolize")
# The target: burns 0.4 s of CPU, begins `work` (never ended), burns 0.3 s more, then sleeps
# 0.8 s with no samples while the leader keeps reading counters every 100 ms; then exits, or
# kills itself.
script = r'''
import os, signal, sys, time
def burn(s):
    end = time.process_time() + s
    x = 0
    while time.process_time() < end:
        x += 1
burn(0.4)
with open(os.environ["LLMPERFSCOPE_MARKERS"], "a") as f:
    f.write("work begin t=%d\n" % time.monotonic_ns())
burn(0.3)
time.sleep(0.8)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
'''

def walls(out):
    """The group `work`'s wall time as each tool states it."""
    for f in ("profile.json", "run.json"):
        if os.path.exists(os.path.join(out, f)):
            os.unlink(os.path.join(out, f))
    r = subprocess.run([symbolize, out], capture_output=True, text=True)
    check(r.returncode == 0, "symbolize %s: rc %d %s" % (out, r.returncode, r.stderr))
    prof = json.load(open(os.path.join(out, "profile.json")))
    r = subprocess.run([report, out], capture_output=True, text=True)
    check(r.returncode == 0, "report %s: rc %d %s" % (out, r.returncode, r.stderr))
    run = json.load(open(os.path.join(out, "run.json")))
    r = subprocess.run([report, "dump", "run", out], capture_output=True, text=True)
    check(r.returncode == 0, "dump run %s: rc %d %s" % (out, r.returncode, r.stderr))
    m = re.search(r"^\s+work\s+(\d+)\s+([\d.]+)\s", r.stdout, re.M)
    check(m is not None, "dump run %s shows no `work` row:\n%s" % (out, r.stdout))
    return (prof["groups"]["work"]["wall_s"], run["groups"]["work"]["wall_s"],
            float(m.group(2)) if m else -1.0,
            prof["groups"]["work"].get("occurrences"), run["groups"]["work"]["occurrences"],
            int(m.group(1)) if m else -1)

def run_end(out):
    """The run's end by the rule of docs/formats.md, worked out here from the files."""
    meta = json.load(open(os.path.join(out, "meta.json")))
    ends = [int(meta.get("end_ns", 0))]
    times = [s.t for v in samples.bin_files(out).values() for n, stem in v
             for s in samples.read_samples(stem + ".bin").samples]
    ends += times
    ends += [int(o["t_ns"]) for o in samples.read_jsonl(os.path.join(out, "counters.jsonl"))]
    ends += [int(o["t_ns"]) for o in samples.read_jsonl(os.path.join(out, "phases.jsonl"))]
    begin = [int(o["t_ns"]) for o in samples.read_jsonl(os.path.join(out, "phases.jsonl"))
             if o["name"] == "work"][0]
    return (max(ends) - begin) / 1e9, (max(times) - begin) / 1e9

for how in ("exit", "kill"):
    out = "run-" + how
    res = run([python, "-c", script, how],
              shim_env(out, HZ=199, LLMPERFSCOPE_MARKERS=os.path.abspath(out) + "/markers"), timeout=60)
    if how == "kill":
        check(res.rc == -signal.SIGKILL, "kill run ended with %s" % sig_name(res.rc))
    else:
        check(res.rc == 0, "exit run: rc %d" % res.rc)
    sym, rep, dump, occ_sym, occ_rep, occ_dump = walls(out)
    want, to_last_sample = run_end(out)
    info("%s: work wall: symbolizer %.3f, report %.6f, dump %.3f; rule %.6f (last sample %.3f)"
         % (how, sym, rep, dump, want, to_last_sample))
    check(abs(rep - want) < 1e-6, "%s: run.json's wall %.6f is not the rule's %.6f" % (how, rep, want))
    check(abs(sym - want) < 0.0006, "%s: profile.json's wall %.3f is not the rule's %.6f" % (how, sym, want))
    check(abs(dump - want) < 0.0006, "%s: dump run's wall %.3f is not the rule's %.6f" % (how, dump, want))
    check(occ_sym == occ_rep == occ_dump == 1, "%s: occurrences %s %s %s" % (how, occ_sym, occ_rep, occ_dump))
    meta = json.load(open(os.path.join(out, "meta.json")))
    if how == "kill":
        # Idle 0.8 s after its last sample, then killed: an end at the last sample is short.
        check("end_ns" not in meta, "kill: meta.json has an end_ns")
        check(want > to_last_sample + 0.3, "kill: the run's end (%.3f) is not well after its last"
               " sample (%.3f): the test lost its point" % (want, to_last_sample))
    else:
        begin = [int(o["t_ns"]) for o in samples.read_jsonl(os.path.join(out, "phases.jsonl"))
                 if o["name"] == "work"][0]
        check(abs((int(meta["end_ns"]) - begin) / 1e9 - want) < 1e-9,
               "exit: the run's end is not meta.json's end_ns")

# trace.json's power from a RAPL counter: a reading out of order (a small step down) gives no
# point; a real wrap (a fall by more than half the range) gives the energy through the range.
# After the eight set readings the counter climbs at 100 W of the readings' own times (a fixed
# step per line made a spike of the last reading, taken on the way out a few ms after the one
# before: 10 J in 7 ms, 1445 W).
out = "run-exit"
lines = samples.read_jsonl(os.path.join(out, "counters.jsonl"))
check(len(lines) >= 8, "only %d counter readings" % len(lines))
rng = 2 ** 32
uj = [rng - 40000000, rng - 30000000, rng - 31000000, rng - 20000000, rng - 10000000, 5000000,
      15000000, 25000000]
with open(os.path.join(out, "counters.jsonl"), "w") as f:
    energy = 0
    for i, o in enumerate(lines):
        if i < len(uj):
            energy = uj[i]
        else:
            energy += int(100e6 * (int(o["t_ns"]) - int(lines[i - 1]["t_ns"])) / 1e9)  # 100 W, in uJ
        o["rapl"] = [{"zone": "intel-rapl:0", "name": "package-0", "energy_uj": energy,
                      "max_energy_range_uj": rng}]
        f.write(json.dumps(o) + "\n")
os.unlink(os.path.join(out, "trace.json"))
r = subprocess.run([symbolize, out], capture_output=True, text=True)
check(r.returncode == 0, "symbolize after the counters edit: %s" % r.stderr)
trace = json.load(open(os.path.join(out, "trace.json")))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
watts = [v for e in events if e.get("ph") == "C" and "power" in e.get("name", "")
         for v in e.get("args", {}).values()]
info("power points: %s" % ["%.1f" % w for w in watts])
check(len(watts) >= 5, "trace.json has %d power points" % len(watts))
check(all(0 <= w < 1000 for w in watts), "trace.json's power has a point outside 0..1000 W: %s" % watts)
# 10 J in ~0.1 s is ~100 W; the wrap step is 15 J (10 J to the range's top, 5 J after).
check(sum(1 for w in watts if w > 30) >= 4, "the forward steps and the wrap do not show as power: %s" % watts)
finish()
EOF2
