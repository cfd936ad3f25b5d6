"""bench/pool.py: the thread-pool and fork+exec parts of make bench (standard library only).

Run by bench/run.sh after bench/analyze.py (which writes bench/RESULTS.md whole); each part
writes its own section of RESULTS.md, replacing its earlier self. Figures, never verdicts that
fail the bench: exit 0 unless the bench itself could not run.

- thread pool (bench/threadpool.c: as many threads as cores, matrix-vector steps between
  spinning barriers): profiled over unprofiled throughput (the steps per second the pool prints
  for its timed steps, after its warm-up steps) for perfscope, gperftools and `perf record -g`
  at 199 and 997 Hz, and `perf record --call-graph dwarf` at 997 Hz, paired (without, then
  with) in one session, the configurations' order rotated, with an A/A pair.
- fork+exec: a shell loop of /bin/true processes, with and without the shim (and with its
  parts turned off; without it, an idle thread of bench/idlethread.c in every process; and the
  peers, gperftools and `perf record -g`, at 199 Hz), paired: extra CPU (the shell and all its
  children, from wait4; under perf, perf's own too) per process.
- cost per sample, taken apart: bench/sample_cost.c (delivery with a handler that does nothing,
  then the handler's parts, and no signal at all; CPU and each interruption's TSC gap), and the
  shim's own interruption (sample_cost's work under the shim, each gap matched to a sample's time),
  beside the shim's own figures from the pairs above.
"""
import argparse
import bisect
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402
import readers  # noqa: E402
import report  # noqa: E402
from intervals import welch  # noqa: E402


KERNEL_997 = "perfscope 997 Hz, kernel call chains (PERFSCOPE_UNWIND=kernel)"


def pool_configs(have_gperf, have_perf):
    c = [{"name": "A/A (no profiler either side)", "kind": "none", "hz": 0}]
    for hz in (199, 997):
        c.append({"name": "perfscope %d Hz (defaults)" % hz, "kind": "ps", "hz": hz, "env": {}})
        if hz == 997:
            # the kernel's call chains, no signal: perf record -g's way, like for like with it
            c.append({"name": KERNEL_997, "kind": "ps", "hz": hz, "env": {"PERFSCOPE_UNWIND": "kernel"}})
        if have_gperf:
            c.append({"name": "gperftools %d Hz" % hz, "kind": "gperf", "hz": hz})
        if have_perf:
            c.append({"name": "perf record -g -F %d" % hz, "kind": "perf", "hz": hz})
    if have_perf:
        # perf's own DWARF unwinding (a copy of each sample's user stack, unwound afterwards): the
        # peer that, like the shim's libunwind, gives stacks without frame pointers
        c.append({"name": "perf record --call-graph dwarf -F 997", "kind": "perf", "hz": 997,
                  "callgraph": ["--call-graph", "dwarf"]})
    return c


def perf_ok():
    """Whether `perf record -g` of our own child works here (perf_event_paranoid may stop it)."""
    if not shutil.which("perf"):
        return False, "perf is not installed"
    try:
        p = subprocess.run(["perf", "record", "-q", "-g", "-F", "199", "-o", "/dev/null", "--", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "perf record failed: %s" % e
    if p.returncode != 0:
        return False, "perf record refused: %s" % p.stderr.decode(errors="replace").strip().splitlines()[-1:]
    return True, ""


def argv_for(cfg, target, work):
    if cfg["kind"] == "perf":
        return (["perf", "record"] + cfg.get("callgraph", ["-g"]) + ["-F", str(cfg["hz"]),
                "-o", os.path.join(work, "perf.data"), "--"] + target)
    return target


def env_for(cfg, args, work):
    env = analyze.clean_env()
    if cfg["kind"] == "ps":
        env.update({"LD_PRELOAD": os.path.abspath(args.shim), "PERFSCOPE_OUT": work,
                    "PERFSCOPE_HZ": str(cfg["hz"])})
        env.update(cfg.get("env", {}))
    elif cfg["kind"] == "idle":  # bench/resolve.py: what any idle thread in the process does
        env["LD_PRELOAD"] = os.path.abspath(args.idle_thread)
    elif cfg["kind"] == "gperf":
        env.update({"LD_PRELOAD": args.libprofiler, "CPUPROFILE": os.path.join(work, "prof"),
                    "CPUPROFILE_FREQUENCY": str(cfg["hz"])})
    return env


def samples_of(cfg, work, log_path):
    if cfg["kind"] == "ps":
        return readers.perfscope_samples(work)["distinct"]
    if cfg["kind"] == "gperf":
        return readers.gperftools_samples(os.path.join(work, "prof"))["distinct"]
    if cfg["kind"] == "perf":
        with open(log_path, "rb") as f:
            m = re.search(rb"\((\d+) samples\)", f.read())
        return int(m.group(1)) if m else None
    return None


POOL_TIMEOUT_S = 60  # 1.5-3 s on a quiet 2-core machine; oversubscribed, barrier steps wait for time slices


def pool_pair(cfg, args, rep, with_first=False):
    """One pair on the thread pool, without and with, in analyze.runs_in_order's order."""
    work = os.path.join(args.work, "pool%d" % rep)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    target = [os.path.abspath(args.pool)] + ([str(args.steps)] if args.steps else [])
    log = os.path.join(args.work, "pool_with.log")
    base, w = analyze.runs_in_order(
        lambda: analyze.run_once(target, analyze.clean_env(), os.path.join(args.work, "pool_without.log")),
        lambda: analyze.run_once(argv_for(cfg, target, work), env_for(cfg, args, work), log), with_first)
    pair = {"without": base, "with": w, "error": None, "samples": None}
    if base["hung"] or w["hung"]:
        pair["error"] = ("killed after %d s (the machine is oversubscribed: every barrier step waits for a "
                         "time slice)" % analyze.RUN_TIMEOUT_S)
    elif base["rc"] or w["rc"]:
        pair["error"] = "exit status %d/%d" % (base["rc"], w["rc"])
    elif base["out"] != w["out"] or not base["out"]:
        pair["error"] = "output differs: %r vs %r" % (base["out"], w["out"])
    elif not base["step_s"] or not w["step_s"]:
        pair["error"] = "a run printed no steps_per_s"
    else:
        try:
            pair["samples"] = samples_of(cfg, work, log)
        except (OSError, ValueError) as e:
            pair["error"] = "samples unreadable: %s" % e
    shutil.rmtree(work, ignore_errors=True)
    return pair


def throughput_ratio(p):
    """A pool pair's profiled over unprofiled throughput: the steps per second of the pool's timed
    steps (bench/threadpool.c), so neither the warm-up nor the process's start and end count."""
    return p["without"]["step_s"] / p["with"]["step_s"]


def stat(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else None


def fmt(s, f="%.4f"):
    return ("%s [%s-%s]" % (f, f, f)) % s if s else "-"


def pool_section(args, cfgs, pairs, machine, perf_note):
    L = ["## Thread pool (bench/threadpool.c)", "",
         "Written by `bench/pool.py` (run by `make bench` after the pairs above). %d threads (one per "
         "core) each step compute their rows of a 384x384 matrix-vector product, then meet at a "
         "spinning barrier (as ggml's thread pool and OpenMP do); a fixed number of timed steps (%d) after "
         "its warm-up steps, and the throughput ratio is profiled over unprofiled steps per second of the "
         "timed steps as the pool prints them (its first steps measure where the scheduler first places its "
         "threads, which any other thread in the process changes: docs/shim.md; so the throughput leaves out the "
         "profiler's start and exit and its first samples, which the work target's CPU and the fork+exec section "
         "count; the CPU and samples columns are the whole run's), paired in one session, each pair without, then "
         "with (BENCH_POOL_N=%d pairs, the configurations' order rotated each repetition; %d done). Load average at start %s, at end %s. 1.000 = free. A barrier-stepped "
         "pool needs a quiet machine: with more runnable threads than cores each step waits for a time "
         "slice, and the ratios mean nothing." % (
             machine["nproc"], args.steps or 20000, args.n, max(len(v) for v in pairs.values()), machine["loadavg_start"],
             machine["loadavg_end"]), ""]
    if perf_note:
        L += ["`perf record` could not run here: %s (perf_event_paranoid=%s); its rows are missing." % (
            perf_note, machine["paranoid"]), ""]
    L += ["| config | throughput ratio | CPU ratio | samples / (CPU s x Hz) | pairs ok |",
          "|---|---|---|---|---|"]
    rows, logs = {}, {}
    for c in cfgs:
        ok = [p for p in pairs[c["name"]] if not p["error"]]
        logs[c["name"]] = [math.log(throughput_ratio(p)) for p in ok if throughput_ratio(p) > 0]
        thr = stat([throughput_ratio(p) for p in ok])
        cpu = stat([p["with"]["cpu"] / p["without"]["cpu"] for p in ok])
        yl = stat([p["samples"] / (p["with"]["cpu"] * c["hz"]) for p in ok if p["samples"] and c["hz"]])
        rows[c["name"]] = (c, thr)
        L.append("| %s | %s | %s | %s | %d/%d |" % (c["name"], fmt(thr), fmt(cpu),
                                                   fmt(yl, "%.3f") if yl else "-", len(ok), len(pairs[c["name"]])))
    errs = [(c["name"], p["error"]) for c in cfgs for p in pairs[c["name"]] if p["error"]]
    L += [""]
    aa = rows.get(cfgs[0]["name"], (None, None))[1]
    if aa:
        L.append("- Noise floor (A/A): throughput ratio %.4f-%.4f." % (aa[1], aa[2]))
    L.append("- The samples column divides by the profiled run's CPU seconds (user+sys) x the rate: "
             "spinning at the barrier is CPU time too, and is sampled.")
    noise = max(abs(aa[1] - 1), abs(aa[2] - 1)) if aa else None
    ps199 = rows.get("perfscope 199 Hz (defaults)", (None, None))[1]
    if ps199:
        loss = 1 - ps199[0]
        # resolved here only when the median lies further from the target than an A/A pair strays from 1
        unresolved = (" in these pairs, not resolved by them (%.2f%% from the target, within the A/A pairs' "
                      "%.2f%% from 1; the section \"The defaults' cost at 199 Hz, resolved\" takes more pairs)"
                      % (abs(loss - 0.01) * 100, noise * 100)
                      if noise is not None and abs(loss - 0.01) <= noise else "")
        L.append("- target: at most 1%% throughput loss at 199 Hz: perfscope %.4f (loss %.2f%%) -> %s%s" % (
            ps199[0], loss * 100, "met" if loss <= 0.01 else "MISSED", unresolved))
    ps997 = rows.get("perfscope 997 Hz (defaults)", (None, None))[1]
    pr997 = rows.get("perf record -g -F 997", (None, None))[1]

    def against_perf(name):
        """(medians, the difference's words, verdict) of configuration `name` against perf -g at 997
        Hz: the difference of the pairs' mean log throughput ratios, with Welch's 95% interval (the
        pairs of each are independent of the other's)."""
        w = welch(logs[name], logs["perf record -g -F 997"], -1)
        if not w:
            return "", "not resolved (under 2 pairs a side)"
        d, h = w
        v = "met" if d - h >= 0 else "MISSED" if d + h < 0 else "not resolved"
        return ("; perfscope's throughput over perf's %+.2f%% [%+.2f..%+.2f] (means of the log ratios, "
                "Welch's 95%% interval; met: the whole interval at or above 0, MISSED: the whole interval "
                "below it)" % ((math.exp(d) - 1) * 100, (math.exp(d - h) - 1) * 100, (math.exp(d + h) - 1) * 100)), v

    if ps997 and pr997:
        diff, v = against_perf("perfscope 997 Hz (defaults)")
        L.append("- target: at 997 Hz no worse than `perf record -g` at 997 Hz: perfscope %.4f vs perf "
                 "%.4f (medians)%s -> %s" % (ps997[0], pr997[0], diff, v))
    elif ps997:
        L.append("- target at 997 Hz against `perf record -g`: not measured (%s)." % (perf_note or "no perf rows"))
    psk = rows.get(KERNEL_997, (None, None))[1]
    if psk and pr997:
        diff, v = against_perf(KERNEL_997)
        L.append("- the same target with the kernel's call chains (`--unwind kernel`: frame-pointer stacks, no "
                 "signal, as `perf record -g` takes them; not the default, which also walks code without frame "
                 "pointers): perfscope %.4f vs perf %.4f (medians)%s -> %s" % (psk[0], pr997[0], diff, v))
    prd = rows.get("perf record --call-graph dwarf -F 997", (None, None))[1]
    if ps997 and prd:
        L.append("- beside perf's DWARF unwinding at 997 Hz, the peer that also gives stacks without frame "
                 "pointers (no target): perfscope %.4f vs perf --call-graph dwarf %.4f." % (ps997[0], prd[0]))
    for name, e in errs:
        L.append("- failed pair, %s: %s" % (name, e))
    return L


FORK_CONFIGS = [
    {"name": "A/A (no shim either side)", "env": None},
    {"name": "shim, defaults (199 Hz, tick timer)", "env": {}},
    {"name": "shim, PERFSCOPE_HZ=0 (no sampling: no sample files, maps, clocks, libunwind)",
     "env": {"PERFSCOPE_HZ": "0"}},
    {"name": "shim, 997 Hz (perf events)", "env": {"PERFSCOPE_HZ": "997"}},
    {"name": "the shim's libraries alone (those it is linked with, preloaded: the loader's share at every start)",
     "env": "libs"},
    {"name": "no shim: one idle thread per process (bench/idlethread.c preloaded: started at start and in a "
             "fork child, joined at exit and before exec, as the shim does with its writer)", "env": "idle"},
    {"name": "no shim: the same idle thread, pinned to its creator's CPU (IDLETHREAD_PIN=1)", "env": "idle-pinned"},
    # The peers, where they can run (fork_configs): what each process costs under them.
    {"name": "gperftools 199 Hz (libprofiler preloaded with CPUPROFILE: each process starts its profiler and "
             "writes its own profile)", "env": "gperf", "peer": "gperf"},
    {"name": "perf record -g -F 199 (the loop under perf: the kernel's work for each process and perf's own, "
             "perf's start and end included)", "env": "perf", "peer": "perf"},
    {"name": "perf record -g -F 199 of the same loop with no iteration (perf's start and end alone, spread over "
             "the loop's processes: taken off below)", "env": "perf", "peer": "perf", "procs": 0},
]


def fork_configs(have_gperf, have_perf):
    return [c for c in FORK_CONFIGS if c.get("peer") is None or (c["peer"] == "gperf" and have_gperf)
            or (c["peer"] == "perf" and have_perf)]


def soname(path):
    out = subprocess.run(["objdump", "-p", path], capture_output=True, text=True).stdout
    return next((f[1] for f in (l.split() for l in out.splitlines()) if f[:1] == ["SONAME"]), None)


def shim_libs(shim):
    """The libraries every process under the shim maps at start: those it is linked with (its
    NEEDED entries, but glibc's own). libunwind comes with a process's first sample (dlopen), so
    the loop's /bin/true, which takes none, never maps it."""
    out = subprocess.run(["objdump", "-p", shim], capture_output=True, text=True).stdout
    libs = [f[1] for f in (l.split() for l in out.splitlines()) if f[:1] == ["NEEDED"]]
    libs = [l for l in libs if not l.startswith(("libc.so", "ld-linux", "libdl.", "librt.", "libpthread."))]
    return ":".join(libs)


def fork_env(cfg, args, work):
    env = analyze.clean_env()
    if cfg["env"] == "libs":
        env["LD_PRELOAD"] = shim_libs(args.shim)
    elif cfg["env"] == "gperf":
        env.update({"LD_PRELOAD": args.libprofiler, "CPUPROFILE": os.path.join(work, "prof"),
                    "CPUPROFILE_FREQUENCY": "199"})
    elif cfg["env"] == "perf":
        pass  # the loop runs under perf record (fork_pair)
    elif cfg["env"] in ("idle", "idle-pinned"):
        env["LD_PRELOAD"] = os.path.abspath(args.idle_thread)
        if cfg["env"] == "idle-pinned":
            env["IDLETHREAD_PIN"] = "1"
    elif cfg["env"] is not None:
        env.update({"LD_PRELOAD": os.path.abspath(args.shim), "PERFSCOPE_OUT": work})
        env.update(cfg["env"])
    return env


def fork_pair(cfg, args, rep):
    work = os.path.join(args.work, "fork%d" % rep)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    argv = ["bash", "-c", 'for ((i = 0; i < %d; i++)); do /bin/true; done; echo "checksum done"'
            % cfg.get("procs", args.procs)]
    base = analyze.run_once(argv, analyze.clean_env(), os.path.join(args.work, "fork_without.log"))
    if cfg["env"] == "perf":
        argv = ["perf", "record", "-q", "-g", "-F", "199", "-o", os.path.join(work, "perf.data"), "--"] + argv
    w = analyze.run_once(argv, fork_env(cfg, args, work), os.path.join(args.work, "fork_with.log"))
    err = None
    if base["rc"] or w["rc"] or base["out"] != w["out"]:
        err = "exit status %d/%d, output %r/%r" % (base["rc"], w["rc"], base["out"], w["out"])
    procs = None
    path = os.path.join(work, "procs.jsonl")
    if isinstance(cfg["env"], dict) and os.path.exists(path):
        with open(path) as f:
            procs = sum(1 for line in f if '"exit"' in line)
    shutil.rmtree(work, ignore_errors=True)
    return {"without": base, "with": w, "error": err, "exits": procs}


def fork_section(args, pairs, machine):
    L = ["## Fork+exec: what each process pays", "",
         "Written by `bench/pool.py`. A bash loop runs /bin/true %d times; each pair runs it without, "
         "then with (BENCH_FORK_N=%d pairs, the configurations' order rotated each repetition). Extra CPU per process = (CPU with - "
         "CPU without) / %d, the CPU being user+sys of the shell and all its children (wait4). Every "
         "process of the loop is measured with the shim: the shell's fork child, its exec and /bin/true. "
         "Load average at start %s, at end %s." % (args.procs, args.fork_n, args.procs,
                                                  machine["loadavg_start"], machine["loadavg_end"]), "",
         "| config | extra CPU ms / process | CPU ratio | exit lines / processes | pairs ok |",
         "|---|---|---|---|---|"]
    med = {}
    for c in FORK_CONFIGS:
        if c["name"] not in pairs:
            continue
        ok = [p for p in pairs[c["name"]] if not p["error"]]
        d = stat([(p["with"]["cpu"] - p["without"]["cpu"]) / args.procs * 1e3 for p in ok])
        r = stat([p["with"]["cpu"] / p["without"]["cpu"] for p in ok])
        ex = [p["exits"] for p in ok if p["exits"] is not None]
        med[c["name"]] = d
        L.append("| %s | %s | %s | %s | %d/%d |" % (c["name"], fmt(d, "%.3f"), fmt(r), "%d / %d" % (
            statistics.median(ex), args.procs) if ex else "-", len(ok), len(pairs[c["name"]])))
    L.append("")
    d = med.get(FORK_CONFIGS[1]["name"])
    if d:
        L.append("- target: at most +0.3 ms CPU per process (defaults): %+.3f ms -> %s" % (
            d[0], "met" if d[0] <= 0.3 else "MISSED"))
    aa = med.get(FORK_CONFIGS[0]["name"])
    if aa:
        L.append("- Noise floor (A/A): %+.3f..%+.3f ms per process." % (aa[1], aa[2]))
    dflt, hz0, perf, libs = (med.get(c["name"]) for c in FORK_CONFIGS[1:5])
    if dflt and hz0 and perf and libs:
        L.append("- Where it goes (medians, ms per process): the loader mapping the shim's libraries %.3f; "
                 "the shim's start and end without sampling (constructor, fork handler, procs.jsonl lines, "
                 "leader lock, writer thread, exit path) %.3f; sampling on top (the clock, the ring, the handler; "
                 "sample files, the maps snapshot and libunwind come with a process's first sample) %.3f; "
                 "perf events instead of "
                 "the tick timer (997 Hz) %+.3f more." % (libs[0], hz0[0] - libs[0], dflt[0] - hz0[0],
                                                          perf[0] - dflt[0]))
    idle, pinned = med.get(FORK_CONFIGS[5]["name"]), med.get(FORK_CONFIGS[6]["name"])
    if idle and pinned and dflt:
        L.append("- One idle thread per process, no shim: %+.3f ms per process (%.0f%% of the defaults' %+.3f); "
                 "pinned to its creator's CPU %+.3f. The loop's shell forks while its thread exists, and its "
                 "fork child and /bin/true each start one: what a design pays here that keeps a thread in "
                 "every process, as the shim's writer does, before the thread does anything (docs/shim.md, "
                 "\"What a process pays\")." % (idle[0], 100 * idle[0] / dflt[0], dflt[0], pinned[0]))
    gperf, perf, perf0 = (med.get(c["name"]) for c in FORK_CONFIGS[7:10])
    if dflt:
        peers = []
        if gperf:
            peers.append("gperftools at 199 Hz %+.3f ms per process (%.1fx the shim's defaults)" % (gperf[0], gperf[0] / dflt[0]))
        if perf and perf0:
            peers.append("`perf record -g -F 199` %+.3f ms per process, of which %.3f is perf's own start and end "
                         "spread over the loop: %+.3f for each process (%.1fx the shim's defaults)"
                         % (perf[0], perf0[0], perf[0] - perf0[0], (perf[0] - perf0[0]) / dflt[0]))
        if peers:
            L.append("- The peers, in the same run: " + "; ".join(peers) + ".")
    L.append("- exit lines counts the `exit` lines in procs.jsonl: the loop's /bin/true processes "
             "(the shell's own exit line too) must all be there, lazy start or not.")
    return L


def shim_gaps(args, env_extra, rounds, acc):
    """bench/sample_cost under the shim at 997 Hz for `rounds` rounds: each of the shim's samples
    matched, by its time, to the TSC gap it fell in; (gap, before the sample's clock read, after
    it) appended to acc's three lists."""
    out = os.path.join(args.work, "cost_shim")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    gaps_path = out + ".gaps"
    env = analyze.clean_env()
    env.update({"LD_PRELOAD": os.path.abspath(args.shim), "PERFSCOPE_OUT": out, "PERFSCOPE_HZ": "997",
                "PERFSCOPE_CLOCK": "perf"})
    env.update(env_extra)
    try:
        subprocess.run([os.path.abspath(args.cost), str(rounds), "997", "shim", gaps_path], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=True)
        gaps = {}
        with open(gaps_path) as f:
            for line in f:
                tid, a, b = line.split()
                gaps.setdefault(int(tid), []).append((float(a), float(b)))
        times = readers.perfscope_times(out)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        print("bench: sample_cost under the shim failed: %s" % e)
        return
    tot, pre, post = acc
    for tid, g in gaps.items():
        starts = [x[0] for x in g]
        for t in times.get(tid, []):
            k = bisect.bisect_right(starts, t) - 1
            if k >= 0 and g[k][0] <= t <= g[k][1]:
                tot.append((g[k][1] - g[k][0]) / 1e3)
                pre.append((t - g[k][0]) / 1e3)
                post.append((g[k][1] - t) / 1e3)


SHIM_COST_CONFIGS = (("libunwind ring (the default)", {}), ("fp ring", {"PERFSCOPE_UNWIND": "fp"}))


def cost_section(args):
    """bench/sample_cost's medians, and the shim's own interruption: -> the section's lines. The
    probe and the shim's runs alternate in three stretches (the host's load drifts by the minute);
    each figure is the median of the stretches' medians (CPU's range: over all rounds)."""
    reps = 3 if args.cost_rounds >= 3 else 1
    rounds = max(1, args.cost_rounds // reps)
    per = {}
    acc = {name: ([], [], []) for name, _ in SHIM_COST_CONFIGS}
    for _ in range(reps):
        try:
            p = subprocess.run([os.path.abspath(args.cost), str(rounds), "997"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=300)
            text = p.stdout.decode(errors="replace")
        except (OSError, subprocess.TimeoutExpired) as e:
            text = ""
            print("bench: sample_cost failed: %s" % e)
        for line in text.splitlines():
            f = line.split()
            if len(f) >= 3 and f[0] == "mode":
                per.setdefault(f[1], []).append(None if f[2] == "refused" else (
                    float(f[3]), float(f[5]), float(f[7]), int(f[9]), float(f[11]), float(f[13]), float(f[15]),
                    float(f[17])))
        for name, env in SHIM_COST_CONFIGS:
            shim_gaps(args, env, rounds, acc[name])
    res = {}
    for m, rows in per.items():
        rows = [r for r in rows if r]
        res[m] = None if not rows else (
            statistics.median(r[0] for r in rows), min(r[1] for r in rows), max(r[2] for r in rows), rows[0][3]) + \
            tuple(statistics.median(r[k] for r in rows) for k in range(4, 8))
    L = ["## Cost per sample, taken apart (bench/sample_cost.c)", "",
         "Written by `bench/pool.py`. One thread runs fixed work at the leaf of a 40-deep call chain "
         "under a perf task-clock at 997 Hz set up as the shim sets it up; each mode adds a part of "
         "what the shim's handler does. Two measures: CPU = (the thread's CPU clock, handler and kernel "
         "included, minus the same work without a clock in the same round) / signals, everything but noisy; "
         "interruption = the signal's gap in a work loop that reads the TSC every ~12 ns, told from other "
         "interrupts by the handler's own TSC stamps and split at them (before the handler: timer interrupt, "
         "overflow, wakeup, signal frame; the handler; after it: sigreturn). %d rounds in %d stretches "
         "alternated with the shim's runs, medians ([min-max] for CPU), modes rotated each round. Load average "
         "%s." % (rounds * reps, reps, report.loadavg()), "",
         "| mode | what it adds | CPU us / signal | interruption us | before the handler | handler | after it | signals a round |",
         "|---|---|---|---|---|---|---|---|"]
    what = {"ring": "the kernel: timer interrupt, overflow, SIGPROF through the ring buffer's wakeup, "
                    "signal frame and return (a handler that does nothing)",
            "sigtrap": "the same with synchronous SIGTRAP delivery (no wakeup through irq_work)",
            "fp": "ring + clock_gettime + a 40-frame frame-pointer walk into a slot",
            "libunwind": "ring + clock_gettime + unw_backtrace (libunwind's caching fast tracer)",
            "unw_step": "ring + clock_gettime + libunwind step by step from the signal context",
            "callchain": "no signal: the kernel writes each overflow's user call chain (frame pointers) to a "
                         "ring buffer (before/after: split at the record's time)",
            "tick": "the per-thread POSIX CPU timer instead (the shim's clock at 199 Hz): checked at the "
                    "scheduler tick, SIGPROF queued from there, a handler that does nothing (at most one "
                    "signal a tick; 4x the work a round)"}
    for m in ("ring", "sigtrap", "fp", "libunwind", "unw_step", "callchain", "tick"):
        r = res.get(m)
        if not r:
            L.append("| %s | %s | %s | - | - | - | - | - |" % (m, what[m], "refused" if m in res else "-"))
            continue
        L.append("| %s | %s | %.1f [%.1f-%.1f] | %.1f | %.1f | %s | %.1f | %d |" % (
            m, what[m], r[0], r[1], r[2], r[4], r[5], "-" if m == "callchain" else "%.2f" % r[6], r[7], r[3]))
    for name, _ in SHIM_COST_CONFIGS:
        tot, pre, post = acc[name]
        g = ("%.1f" % statistics.median(tot), "%.1f" % statistics.median(pre), "%.1f" % statistics.median(post),
             len(tot) // (rounds * reps)) if tot else ("-", "-", "-", "-")
        L.append("| the shim, %s | its whole handler (LD_PRELOAD, split at its sample's clock read) | see the "
                 "pairs | %s | %s | - | %s | %s |" % ((name,) + g))
    L.append("")
    if res.get("ring") and res.get("libunwind") and res.get("fp"):
        ring, unw, fp = res["ring"], res["libunwind"], res["fp"]
        by_cpu = ("By CPU: %.1f us, of which delivery %.1f." % (unw[0], ring[0]) if 0 < ring[0] <= unw[0] else
                  "By CPU (%.1f us, delivery %.1f) these rounds are too noisy to split: the interruption is the "
                  "figure to read." % (unw[0], ring[0]))
        L.append("- Of a libunwind sample on ring delivery (interruption %.1f us here): delivery %.1f us "
                 "before the handler and %.1f after it, the handler's clock read, walk and copy %.2f us "
                 "with libunwind (%.2f with frame pointers). %s" % (
                     unw[4], ring[5], ring[7], unw[6], fp[6], by_cpu))
    if res.get("sigtrap") and res.get("ring"):
        L.append("- Synchronous SIGTRAP delivery: interruption %+.1f us a signal against ring delivery (CPU %+.1f). "
                 "It is not the default: a debugger attached (or attaching) to the target is stopped by every "
                 "sample, and nothing can tell it apart before the debugger sees it." % (
                     res["sigtrap"][4] - res["ring"][4], res["sigtrap"][0] - res["ring"][0]))
    if res.get("callchain") and res.get("fp"):
        L.append("- No signal at all (the kernel's frame-pointer call chain into a ring buffer): interruption "
                 "%.1f us against %.1f for ring delivery with a frame-pointer walk: the floor of any sampling "
                 "on this machine's timer interrupt, and a stack only where every frame keeps its frame pointer." % (
                     res["callchain"][4], res["fp"][4]))
    if res.get("none") and res.get("tick"):
        tick, bare = res["tick"], res["none"]
        # The bound: the whole interruption of a tick-timer signal, the tick included (which comes
        # with or without the signal, and which the machine's other interrupts keep us from timing
        # alone); the CPU measure, which would take the tick out, is too noisy at so few signals.
        L.append("- The tick timer (the defaults' clock at 199 Hz): its signal comes with a scheduler tick and "
                 "interrupts the thread %.1f us in all, the tick's own interrupt included; at 199 Hz that bounds "
                 "the delivery at %.2f%% of a sampled thread's CPU, before any stack is taken (target for the "
                 "whole cost: at most +0.5%%). How much of it the tick costs anyway is not resolved here: "
                 "the CPU measure gives %.1f us a signal [%.1f-%.1f] at %d signals a round, and the machine's "
                 "own interrupts without a clock (%d a round, %.1f us median) are not only ticks." % (
                     tick[4], tick[4] * 199 / 1e4, tick[0], tick[1], tick[2], tick[3], bare[3], bare[4]))
    L.append("- The shim's whole cost per delivered sample is in the first table (us / sample: the pairs' "
             "extra CPU over distinct samples) and the shim's threads' share in the second (shim threads us / "
             "sample). Its rows here are the interruption alone, its handler included (the host's load moves "
             "these figures by half from one minute to the next, hence the alternation); what the pairs add "
             "beyond it is the shim's threads and the work's slower return after each interruption.")
    return L


def replace_section(path, title, lines):
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        text = ""
    start = text.find(title)
    if start >= 0:
        nxt = text.find("\n## ", start + len(title))
        # keep sub-sections that belong to this one (none today): cut up to the next "## "
        text = text[:start].rstrip("\n") + ("\n\n" + text[nxt + 1:] if nxt >= 0 else "")
    text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--libprofiler", default="")
    ap.add_argument("--work", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--budget", type=float, default=300, help="stop starting thread-pool repetitions after this")
    ap.add_argument("--fork-n", type=int, default=6)
    ap.add_argument("--procs", type=int, default=200)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--cost", default="")
    ap.add_argument("--idle-thread", required=True, help="bench/idlethread.c built as a shared library")
    ap.add_argument("--cost-rounds", type=int, default=9)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    have_perf, perf_note = perf_ok()
    cfgs = pool_configs(bool(args.libprofiler), have_perf)
    machine = report.machine_info()
    start = time.monotonic()
    print("bench: thread pool, %d configurations x %d pairs; load %s" % (len(cfgs), args.n,
                                                                       machine["loadavg_start"]), flush=True)
    pairs = {c["name"]: [] for c in cfgs}
    analyze.RUN_TIMEOUT_S = POOL_TIMEOUT_S
    reps = 0
    for rep in range(args.n):
        elapsed = time.monotonic() - start
        if reps and elapsed + elapsed / reps > args.budget:
            print("bench: thread-pool time budget (%.0f s) reached after %d repetitions" % (args.budget, reps))
            break
        reps += 1
        order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
        for c in order:
            p = pool_pair(c, args, rep)
            pairs[c["name"]].append(p)
            print("  rep %d  %-36s throughput %.4f  samples %s%s" % (
                rep + 1, c["name"], throughput_ratio(p) if not p["error"] else 0, p["samples"],
                ("  ERROR " + p["error"]) if p["error"] else ""), flush=True)
    machine["loadavg_end"] = report.loadavg()
    replace_section(args.results, "## Thread pool", pool_section(args, cfgs, pairs, machine, perf_note))

    analyze.RUN_TIMEOUT_S = 90
    machine["loadavg_start"] = report.loadavg()
    fcfgs = fork_configs(bool(args.libprofiler), have_perf)
    fpairs = {c["name"]: [] for c in fcfgs}
    for rep in range(args.fork_n):
        order = fcfgs[rep % len(fcfgs):] + fcfgs[:rep % len(fcfgs)]
        for c in order:
            p = fork_pair(c, args, rep)
            fpairs[c["name"]].append(p)
            print("  rep %d  %-40.40s extra %.3f ms/process%s" % (
                rep + 1, c["name"], (p["with"]["cpu"] - p["without"]["cpu"]) / args.procs * 1e3,
                ("  ERROR " + p["error"]) if p["error"] else ""), flush=True)
    machine["loadavg_end"] = report.loadavg()
    replace_section(args.results, "## Fork+exec", fork_section(args, fpairs, machine))
    if args.cost:
        replace_section(args.results, "## Cost per sample, taken apart", cost_section(args))
    print("bench: thread pool and fork+exec sections written (%.0f s)" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
