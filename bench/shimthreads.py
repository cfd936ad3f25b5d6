"""bench/shimthreads.py: the shim's own threads, their start-up and their steady state (standard
library only).

Run by bench/run.sh after bench/resolve.py; writes its own section of bench/RESULTS.md,
replacing its earlier self. The first table's "shim threads % of a core" divides the threads'
whole CPU time by a short run's wall time, so a fixed start-up cost (the machine check, the
counters' start, the first sample file and maps, libunwind's loading and first use) weighs on it
as much as what the threads cost each second of a long run. This separates the two: rounds of a
short and a four times longer run of bench/target.c at 199 Hz (the defaults otherwise), in
alternated order; from each round's pair, the steady cost is the slope (CPU of the long run's
threads minus the short run's, over the wall time between them) and the start-up the rest of
the short run's. CPU is meta.json's `sampling.shim_threads_cpu_s` (each thread's getrusage);
wall is the run's, from outside. And the threads' wakeups when nothing changes: an idle target
(`sleep`) under the shim with the counters off, a short and a longer run, the slope of
meta.json's `sampling.shim_threads_wakeups` between them (a young process's quick passes left
out, as in the steady state above). Figures, never verdicts that fail the bench: exit 0 unless the
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
DEFAULT_ITERS = 850000000  # bench/target.c's BENCH_ITERS: about 1.3-1.8 s here
TARGET_IDLE_WAKEUPS = 5.0  # the bound: wakeups a second in all when nothing changes
IDLE_S = (1.5, 4.5)        # the idle runs' lengths, s


def one_run(args, iters, tag, argv=None, extra_env=None):
    """-> (wall s, shim threads CPU s, wakeups) of one run under the shim at its defaults
    (bench/target.c for iters iterations a thread, or argv)."""
    work = os.path.join(args.work, "threads-" + tag)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = analyze.with_env({"kind": "ps", "hz": 199}, args, work)
    env.update(extra_env or {})
    r = analyze.run_once(argv or [os.path.abspath(args.target), str(iters)], env,
                         os.path.join(args.work, "threads.log"))
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


def idle_rates(args):
    """-> the shim threads' wakeups a second on an idle target with the counters off, one per
    round: the slope between a sleep of IDLE_S[0] and one of IDLE_S[1], in alternated order."""
    rates = []
    for i in range(args.rounds):
        got = {}
        for t in (IDLE_S if i % 2 == 0 else IDLE_S[::-1]):
            got[t] = one_run(args, 0, "idle", ["/bin/sleep", str(t)], {"PERFSCOPE_COUNTER_MS": "0"})
        a, b = got[IDLE_S[0]], got[IDLE_S[1]]
        if a and b and a[2] is not None and b[2] is not None and b[0] > a[0]:
            rates.append((b[2] - a[2]) / (b[0] - a[0]))
    return rates


def section(rounds, iters, machine, idle=None):
    short = [r[0] for r in rounds]
    long_ = [r[1] for r in rounds]
    kept = [(s, l) for s, l in zip(short, long_) if l[0] > s[0]]
    slope = [(l[1] - s[1]) / (l[0] - s[0]) for s, l in kept]
    start = [s[1] - k * s[0] for (s, _), k in zip(kept, slope)]  # each round with its own slope
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
        L.append("- no round gave both runs: no steady state or start-up to report")
        L += idle_line(idle)
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
    short_wall = stat([s[0] for s in short])[0]
    L.append("- The start-up is paid once a process: on a run of T seconds it adds start-up / T to the "
             "share (%.1f ms: %.2f%% of the %.1f s run, %.3f%% of a minute)." % (
                 stat(start)[0] * 1000, stat(start)[0] / short_wall * 100, short_wall, stat(start)[0] / 60 * 100))
    return L + idle_line(idle)


def idle_line(idle):
    """The idle-wakeups target's line, [] when no idle round gave a figure."""
    L = []
    if idle:
        r = stat(idle)
        L.append("- target: when nothing changes, the shim's threads wake at most %.0f times a second in all "
                 "(an idle `sleep` under the shim, counters off; the slope of meta.json's shim_threads_wakeups, "
                 "the threads' passes, between a %.1f s and a %.1f s run, %d rounds; t_shim_wakeups counts "
                 "their context switches): %.2f [%.2f-%.2f] -> %s. Counters on add one "
                 "wakeup a counter period (PERFSCOPE_COUNTER_MS, a user setting: 10 a second at its default)."
                 % (TARGET_IDLE_WAKEUPS, IDLE_S[0], IDLE_S[1], len(idle), r[0], r[1], r[2],
                    "met" if r[0] <= TARGET_IDLE_WAKEUPS else "MISSED"))
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
    idle = idle_rates(args)
    print("  idle wakeups a second: %s" % ", ".join("%.2f" % x for x in idle), flush=True)
    pool.replace_section(args.results, "## The shim's own threads: start-up and steady state",
                         section(rounds, args.iters, machine, idle))
    print("bench: shim threads section written (%.0f s)" % (time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
