"""bench/analyze.py: the make-bench driver (standard library only).

Runs the fixed-work target in pairs (without, then with) for every configuration,
N repetitions, in one session; measures wall time and the child's CPU (user+sys from wait4's
rusage); counts each profiler's distinct samples; then bench/report.py writes RESULTS.md.
Per configuration, paired per repetition: wall ratio and CPU ratio (with/without), yield =
distinct samples / (the profiled run's CPU s x asked rate), cost per delivered sample =
(CPU with - CPU without) / distinct samples. It reports figures; it never fails on them.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readers  # noqa: E402
import report  # noqa: E402

RUN_TIMEOUT_S = 90  # a run this long is a hang: killed, counted, left out of the figures


def configs(have_gperf):
    c = [{"name": "A/A (no profiler either side: the noise floor)", "kind": "none", "hz": 0},
         {"name": "perfscope HZ=0 (no sampling: fixed costs)", "kind": "ps", "hz": 0,
          "clock": "auto", "unwind": "libunwind", "delivery": "ring"}]
    for hz in (199, 997):
        for clock in ("perf", "timer"):
            for unwind in ("libunwind", "fp"):
                c.append({"kind": "ps", "hz": hz, "clock": clock, "unwind": unwind,
                          "delivery": "ring"})
    # the shim's own threads without the counter reads (a user setting, PERFSCOPE_COUNTER_MS)
    c.append({"kind": "ps", "hz": 199, "clock": "timer", "unwind": "libunwind", "delivery": "ring",
              "env": {"PERFSCOPE_COUNTER_MS": "0"},
              "name": "perfscope 199 Hz timer libunwind ring, counters off"})
    for d in ("refresh", "sigtrap"):
        c.append({"kind": "ps", "hz": 997, "clock": "perf", "unwind": "libunwind", "delivery": d})
    # the kernel's call chains: no signal, so no delivery to choose (the shim picks "callchain")
    for hz in (199, 997):
        c.append({"kind": "ps", "hz": hz, "clock": "perf", "unwind": "kernel",
                  "name": "perfscope %d Hz perf kernel (call chains, no signal)" % hz})
    if have_gperf:
        for hz in (199, 997):
            c.append({"kind": "gperf", "hz": hz})
    for x in c:
        if "name" not in x:
            if x["kind"] == "ps":
                x["name"] = "perfscope %d Hz %s %s %s" % (x["hz"], x["clock"], x["unwind"],
                                                          x["delivery"])
            else:
                x["name"] = "gperftools %d Hz" % x["hz"]
    return c


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k == "LD_PRELOAD" or k.startswith(("PERFSCOPE_", "LLMPERFSCOPE_", "CPUPROFILE")):
            del env[k]
    return env


def run_once(argv, env, log_path):
    """-> dict(wall, cpu, rc, out, hung, step_s). CPU = user+sys of the child from wait4; step_s:
    seconds per step of a target that prints its own `steps_per_s` (bench/threadpool.c: its timed
    steps only), else None."""
    with open(log_path, "wb") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        hung = threading.Event()

        def kill():
            hung.set()
            p.kill()
        timer = threading.Timer(RUN_TIMEOUT_S, kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(log_path, "rb") as f:
        text = f.read().decode(errors="replace")
    checksum = next((l for l in text.splitlines() if l.startswith("checksum ")), "")
    rate = re.search(r"\bsteps_per_s ([0-9.]+)", text)
    step_s = 1 / float(rate.group(1)) if rate and float(rate.group(1)) > 0 else None
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime,
            "sys": ru.ru_stime, "rc": p.returncode,
            "out": checksum, "hung": hung.is_set(), "step_s": step_s}


def with_env(cfg, args, work):
    env = clean_env()
    if cfg["kind"] == "ps":
        env.update({"LD_PRELOAD": os.path.abspath(args.shim), "PERFSCOPE_OUT": work,
                    "PERFSCOPE_HZ": str(cfg["hz"])})
        # a configuration without clock, unwind or delivery runs the shim's default for it
        for key, var in (("clock", "PERFSCOPE_CLOCK"), ("unwind", "PERFSCOPE_UNWIND"),
                         ("delivery", "PERFSCOPE_PERF_DELIVERY")):
            if key in cfg:
                env[var] = cfg[key]
        env.update(cfg.get("env", {}))
    elif cfg["kind"] == "gperf":
        env.update({"LD_PRELOAD": args.libprofiler, "CPUPROFILE": os.path.join(work, "prof"),
                    "CPUPROFILE_FREQUENCY": str(cfg["hz"])})
    return env


def count_samples(cfg, work):
    if cfg["kind"] == "ps" and cfg["hz"] > 0:
        return readers.perfscope_samples(work)
    if cfg["kind"] == "gperf":
        return readers.gperftools_samples(os.path.join(work, "prof"))
    return None


def gperf_own_count(log_path):
    """gperftools' own tally at exit ("PROFILE: interrupts/evictions/bytes = N/..."), to
    cross-check the profile reader."""
    with open(log_path, "rb") as f:
        m = re.search(rb"PROFILE: interrupts/evictions/bytes = (\d+)/", f.read())
    return int(m.group(1)) if m else None


def runs_in_order(run_without, run_with, with_first):
    """-> (without, with): a pair's two runs, without first unless with_first (bench/resolve.py
    draws the order so that it cancels in the mean)."""
    if with_first:
        w = run_with()
        return run_without(), w
    base = run_without()
    return base, run_with()


def one_pair(cfg, args, argv, rep, with_first=False):
    """One pair: the target without the profiler and with it, in runs_in_order's order."""
    work = os.path.join(args.work, "r%d" % rep)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base, w = runs_in_order(lambda: run_once(argv, clean_env(), os.path.join(args.work, "without.log")),
                            lambda: run_once(argv, with_env(cfg, args, work), os.path.join(args.work, "with.log")),
                            with_first)
    pair = {"rep": rep, "without": base, "with": w, "error": None, "samples": None}
    if base["hung"] or w["hung"]:
        pair["error"] = "hung (killed after %d s)" % RUN_TIMEOUT_S
    elif base["rc"] != 0 or w["rc"] != 0:
        pair["error"] = "exit status %d/%d" % (base["rc"], w["rc"])
    elif base["out"] != w["out"] or not base["out"]:
        pair["error"] = "output differs: %r vs %r" % (base["out"], w["out"])
    else:
        try:
            pair["samples"] = count_samples(cfg, work)
        except (OSError, ValueError) as e:
            pair["error"] = "samples unreadable: %s" % e
        if pair["samples"] and cfg["kind"] == "gperf":
            pair["samples"]["own_count"] = gperf_own_count(os.path.join(args.work, "with.log"))
    shutil.rmtree(work, ignore_errors=True)
    return pair


def run_args(ap):
    """The arguments every part of make bench that runs bench/target.c under the shim takes."""
    ap.add_argument("--target", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--results", required=True)


def main():
    ap = argparse.ArgumentParser()
    run_args(ap)
    ap.add_argument("--libprofiler", default="")
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--budget", type=float, default=500)
    ap.add_argument("--iters", default="")
    args = ap.parse_args()

    argv = [os.path.abspath(args.target)] + ([args.iters] if args.iters else [])
    os.makedirs(args.work, exist_ok=True)
    cfgs = configs(bool(args.libprofiler))
    machine = report.machine_info()
    start = time.monotonic()
    print("bench: %d configurations x %d pairs; load average at start %s"
          % (len(cfgs), args.n, machine["loadavg_start"]), flush=True)
    # warm-up, not measured: page cache, CPU frequency, the shim's first dlopen of libunwind
    run_once(argv, clean_env(), os.path.join(args.work, "warm.log"))
    run_once(argv, with_env(cfgs[2], args, args.work), os.path.join(args.work, "warm.log"))

    pairs = {c["name"]: [] for c in cfgs}
    reps_done = 0
    for rep in range(args.n):
        elapsed = time.monotonic() - start
        per_rep = elapsed / reps_done if reps_done else 0
        if reps_done and elapsed + per_rep > args.budget:
            print("bench: time budget (%.0f s) reached after %d repetitions" % (args.budget, reps_done))
            break
        # rotate the order each repetition so no configuration always follows the same one
        order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
        for cfg in order:
            p = one_pair(cfg, args, argv, rep)
            pairs[cfg["name"]].append(p)
            r = p["with"]["cpu"] / p["without"]["cpu"] if p["without"]["cpu"] else 0
            print("  rep %d  %-52s cpu ratio %.4f  samples %s%s" % (
                rep + 1, cfg["name"], r, p["samples"]["distinct"] if p["samples"] else "-",
                ("  ERROR " + p["error"]) if p["error"] else ""), flush=True)
        reps_done += 1
    machine["loadavg_end"] = report.loadavg()
    machine["elapsed_s"] = time.monotonic() - start
    machine["reps"] = reps_done
    rows = [report.summarize(c, pairs[c["name"]]) for c in cfgs]
    report.write(args.results, rows, machine, args)
    print("bench: wrote %s (%.0f s)" % (args.results, machine["elapsed_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
