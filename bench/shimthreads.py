"""bench/shimthreads.py: the shim's own threads, their start-up and their steady state (standard
library only).

Run by bench/run.sh after bench/resolve.py; writes its own section of bench/RESULTS.md,
replacing its earlier self. The first table's "shim threads % of a core" divides the threads'
whole CPU time by a 1.8 s run's wall time, so a fixed start-up cost (the machine check, the
counters' start, the first sample file and maps, libunwind's loading and first use) weighs on it
as much as what the threads cost each second of a long run. This separates the two: rounds of a
short and a four times longer run of bench/target.c at 199 Hz (the defaults otherwise), in
alternated order; from each round's pair, the steady cost is the slope (CPU of the long run's
threads minus the short run's, over the wall time between them) and the start-up the rest of
the short run's. CPU is meta.json's `sampling.shim_threads_cpu_s` (each thread's getrusage);
wall is the run's, from outside. Figures, never verdicts that fail the bench: exit 0 unless the
bench itself could not run.
"""
import argparse
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402
import pool  # noqa: E402
import readers  # noqa: E402
import report  # noqa: E402

TARGET_PCT = 0.2  # the bound for the threads at 199 Hz with 2 busy threads, % of a core
DEFAULT_ITERS = 850000000  # bench/target.c's BENCH_ITERS: about 1.8 s here


def one_run(args, iters, tag):
    """-> (wall s, shim threads CPU s, wakeups) of one run under the shim at its defaults."""
    work = os.path.join(args.work, "threads-" + tag)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = analyze.with_env({"kind": "ps", "hz": 199}, args, work)
    r = analyze.run_once([os.path.abspath(args.target), str(iters)], env, os.path.join(args.work, "threads.log"))
    try:
        s = readers.perfscope_samples(work)
    except (OSError, ValueError):
        s = {}
    shutil.rmtree(work, ignore_errors=True)
    if r["rc"] != 0 or r["hung"] or s.get("shim_threads_cpu_s") is None:
        return None
    return r["wall"], float(s["shim_threads_cpu_s"]), s.get("shim_threads_wakeups")


def stat(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else None


def section(rounds, iters, machine):
    short = [r[0] for r in rounds]
    long_ = [r[1] for r in rounds]
    slope = [(l[1] - s[1]) / (l[0] - s[0]) for s, l in zip(short, long_) if l[0] > s[0]]
    start = [s[1] - k * s[0] for s, k in zip(short, slope)]
    whole_s = [s[1] / s[0] for s in short]
    whole_l = [l[1] / l[0] for l in long_]
    wake = [(l[2] - s[2]) / (l[0] - s[0]) for s, l in zip(short, long_)
            if l[0] > s[0] and l[2] is not None and s[2] is not None]
    L = ["## The shim's own threads: start-up and steady state", "",
         "Written by `bench/shimthreads.py`. Each round runs bench/target.c under the shim at its defaults "
         "(199 Hz, tick timer, libunwind, counters every 100 ms; 2 busy threads) for %d and %d iterations "
         "a thread, in alternated order; %d rounds. Threads' CPU from meta.json's shim_threads_cpu_s. Steady "
         "= (long run's threads CPU - short run's) / (long wall - short wall); start-up = the short run's "
         "threads CPU - steady x its wall. Load average at start %s, at end %s." % (
             iters, 4 * iters, len(rounds), machine["loadavg_start"], report.loadavg()), ""]
    if not slope:
        L.append("- no round gave both runs: nothing to report")
        return L
    f = lambda t, k=100: "%.3f [%.3f-%.3f]" % (t[0] * k, t[1] * k, t[2] * k)  # noqa: E731
    L += ["| figure | median [min-max] |", "|---|---|",
          "| short run: wall s | %.2f [%.2f-%.2f] |" % stat([s[0] for s in short]),
          "| long run: wall s | %.2f [%.2f-%.2f] |" % stat([l[0] for l in long_]),
          "| short run: threads %% of a core (the first table's measure) | %s |" % f(stat(whole_s)),
          "| long run: threads %% of a core | %s |" % f(stat(whole_l)),
          "| steady state: threads %% of a core | %s |" % f(stat(slope)),
          "| start-up: threads CPU ms, once a run | %s |" % f(stat(start), 1000),
          "| steady state: wakeups a second | %s |" % (f(stat(wake), 1) if wake else "-"), ""]
    st = stat(slope)[0] * 100
    L.append("- target: the shim's threads at 199 Hz with 2 busy threads at most %.1f%% of one core: steady "
             "state %.3f%% -> %s; on the %.1f s run, with its start-up, %.3f%% -> %s." % (
                 TARGET_PCT, st, "met" if st <= TARGET_PCT else "MISSED",
                 stat([s[0] for s in short])[0], stat(whole_s)[0] * 100,
                 "met" if stat(whole_s)[0] * 100 <= TARGET_PCT else "MISSED"))
    L.append("- The start-up is paid once a process: on a run of T seconds it adds start-up / T to the "
             "share (%.1f ms: %.2f%% of a 1.8 s run, %.3f%% of a minute)." % (
                 stat(start)[0] * 1000, stat(start)[0] / 1.8 * 100, stat(start)[0] / 60 * 100))
    return L


def main():
    ap = argparse.ArgumentParser()
    analyze.run_args(ap)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--iters", type=int, default=DEFAULT_ITERS)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    machine = report.machine_info()
    t0 = time.monotonic()
    rounds = []
    for i in range(args.rounds):
        order = ("short", "long") if i % 2 == 0 else ("long", "short")
        got = {k: one_run(args, args.iters if k == "short" else 4 * args.iters, k) for k in order}
        print("  round %d  short %s  long %s" % (i + 1, got["short"], got["long"]), flush=True)
        if got["short"] and got["long"]:
            rounds.append((got["short"], got["long"]))
    pool.replace_section(args.results, "## The shim's own threads: start-up and steady state",
                         section(rounds, args.iters, machine))
    print("bench: shim threads section written (%.0f s)" % (time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
