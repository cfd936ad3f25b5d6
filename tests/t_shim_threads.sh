#!/usr/bin/env bash
# t_shim_threads: each thread is sampled on its own CPU time, in its own function, at the asked rate.
# Main and three named threads burn 0.3, 0.4, 0.8 and 1.2 s of CPU in four distinct functions.
# - 997 Hz (auto clock, perf events): samples per thread within 3% of its CPU time x 997.
# - 199 Hz on the tick timer (PERFSCOPE_CLOCK=timer): within 3% (or 2 samples) of CPU x 199.
# - every sample's time inside the run (CLOCK_MONOTONIC), its comm the thread's name, frame 0 in
#   the executable's mapping (snapshot in force) and in the thread's own function for >= 95%.
# - the reference harness's reader reads the file exactly as ours does; header hz = asked rate.
# - meta.json names the clock in use and a delivered rate; auto at 199 Hz picks the tick timer.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_threads
perf=0
if perf_events_allowed; then perf=1; fi

python3 - "$perf" <<'EOF'
import collections, os, sys
import samples
from shimlib import *

perf_ok = sys.argv[1] == "1"
exe = target("t_threads")


def meta_clock_and_rate(meta):
    """The clock named in meta.json and the delivered rates it states."""
    clocks, rates = [], []
    for key, value in samples.leaves(meta):
        k = key.lower()
        if "clock" in k and isinstance(value, str) and value in ("perf", "timer"):
            clocks.append((key, value))
        if ("deliver" in k or "rate" in k) and isinstance(value, (int, float)) and not isinstance(value, bool):
            rates.append((key, value))
    return clocks, rates


def case(hz, clock, expect_clock, rel, absolute, scale=1.0, check_counts=True):
    label = "PERFSCOPE_HZ=%d PERFSCOPE_CLOCK=%s" % (hz, clock)
    out = "out-%s-%d" % (clock, hz)
    report = "report-%s-%d.json" % (clock, hz)
    res = run([exe, report, str(scale)], shim_env(out, HZ=hz, CLOCK=clock), what=label)
    expect_ok(res, label)
    check(res.stderr == b"", "%s: the shim wrote to stderr: %r" % (label, res.stderr[:300]))
    threads = samples.read_jsonl(report)
    files = samples.bin_files(out)
    check(list(files) == [res.pid] and len(files[res.pid]) == 1,
          "%s: expected exactly cpuprof.%d.bin, found %s" % (label, res.pid, sorted(os.listdir(out))))
    stem = files[res.pid][0][1]
    sf = samples.read_samples(stem + ".bin")
    n_ref = samples.check_reference_reader(stem + ".bin")
    check(not sf.truncated and sf.partial_tail == 0,
          "%s: file ends mid-record after a clean exit (count %d, %d records, %d stray bytes)"
          % (label, sf.count, sf.records_in_file, sf.partial_tail))
    check(sf.hz == hz, "%s: header hz %d, asked %d" % (label, sf.hz, hz))
    check(sf.max_frames == 64, "%s: header max_frames %d, default is 64" % (label, sf.max_frames))
    snaps = samples.read_maps(stem + ".maps")
    info("%s: %d samples (reference reader: %d), %d dropped, %d maps snapshots"
         % (label, len(sf.samples), n_ref, sf.dropped, len(snaps)))

    ranges = samples.runtime_ranges(exe, threads[0]["fn"], threads[0]["addr"], [t["fn"] for t in threads])
    by_tid = collections.defaultdict(list)
    for s in sf.samples:
        check(res.t0 <= s.t <= res.t1, "%s: sample time %d outside the run [%d, %d]" % (label, s.t, res.t0, res.t1))
        by_tid[s.tid].append(s)
    times = [s.t for s in sf.samples]
    problems = []
    for t in threads:
        got = by_tid.get(t["tid"], [])
        expected = t["cpu_ns"] / 1e9 * hz
        lo, hi = ranges[t["fn"]]
        comms = collections.Counter(s.comm for s in got)
        in_exe = in_fn = 0
        for s in got:
            if not s.frames:
                continue
            m = samples.find_mapping(samples.snapshot_at(snaps, s.t), s.frames[0])
            if m and "x" in m.perms and os.path.realpath(m.path) == os.path.realpath(exe):
                in_exe += 1
            if lo <= s.frames[0] < hi:
                in_fn += 1
        n = len(got)
        info("  %-9s tid %d: cpu %.3f s, %d samples, expected %.1f (%+.2f%%), frame 0 in exe %d, in %s %d, comm %s"
             % (t["name"], t["tid"], t["cpu_ns"] / 1e9, n, expected, 100 * (n - expected) / expected,
                in_exe, t["fn"], in_fn, dict(comms)))
        if check_counts and not within(n, expected, rel, absolute):
            problems.append("%s (tid %d): %d samples for %.3f s of CPU at %d Hz, expected %.1f +- %.1f"
                            % (t["name"], t["tid"], n, t["cpu_ns"] / 1e9, hz, expected, max(rel * expected, absolute)))
        if n == 0:
            problems.append("%s: no samples" % t["name"])
            continue
        if comms.most_common(1)[0][0] != t["name"]:
            problems.append("%s: samples named %s" % (t["name"], dict(comms)))
        if in_exe < 0.95 * n:
            problems.append("%s: only %d of %d samples have frame 0 in the executable's mapping" % (t["name"], in_exe, n))
        if in_fn < 0.95 * n:
            problems.append("%s: only %d of %d samples have frame 0 in %s" % (t["name"], in_fn, n, t["fn"]))
    if problems:
        die("%s:\n  " % label + "\n  ".join(problems))

    meta = samples.read_meta(os.path.join(out, "meta.json"))
    check(meta.get("status") == "ok", "%s: meta.json status %r, expected \"ok\"" % (label, meta.get("status")))
    clocks, rates = meta_clock_and_rate(meta)
    info("  meta.json clock %s, rates %s" % (clocks, rates))
    check(clocks, "%s: meta.json names no clock (a key with 'clock' whose value is perf or timer)" % label)
    check(all(v == expect_clock for _, v in clocks),
          "%s: meta.json says clock %s, expected %s" % (label, clocks, expect_clock))
    delivered = min(hz, 250) if expect_clock == "timer" else hz
    check(any(0.8 * delivered <= v <= 1.05 * delivered for _, v in rates),
          "%s: meta.json states no delivered rate near %d Hz (found %s)" % (label, delivered, rates))


if perf_ok:
    case(997, "auto", "perf", 0.03, 0)
else:
    info("perf_event_open refused here: the 997 Hz checks are skipped")
case(199, "timer", "timer", 0.03, 2)
# auto below the tick rate picks the (cheaper) tick timer; a short run, for meta.json's clock only.
case(199, "auto", "timer", 0.03, 2, scale=0.2, check_counts=False)
if not perf_ok:
    print("perf events refused (perf_event_paranoid or seccomp): 997 Hz case not run")
    sys.exit(77)
EOF
