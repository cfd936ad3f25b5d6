"""bench/resolve.py: the defaults' cost at 199 Hz, resolved by many pairs (standard library only).

Run by bench/run.sh after bench/pool.py; writes its own section of bench/RESULTS.md, replacing
its earlier self. It answers what the min-max spreads of the first table and of the thread-pool
table cannot: is the cost at 199 Hz under its target? One pair alone varies by 2-3% on this
shared machine, more than either target, so this runs pairs until the 95% interval is narrow
enough to tell met from missed. Two questions:
- bench/target.c (the first table's work target), CPU (user+sys of the child): at most +0.5%;
- bench/threadpool.c (the thread-pool table's target), throughput: at most 1% loss.
Each pair runs the target without and with the shim at its defaults (PERFSCOPE_HZ=199 only) and
alternates which of the two runs first, so that an order effect (the second run finding warm
caches, or a neighbour's burst) cancels in the mean instead of biasing it; the figure is the
geometric mean of the pairs' ratios, with a Student t interval on their logarithms. A/A pairs
(no profiler either side, alternated alike) run beside them as the check that the method finds
no cost where there is none: their interval should hold 0. The number of pairs is fixed before
the first (--cpu-n, --pool-n: chosen from the spread of one pair, so that the half-width comes
out near a quarter of the target); nothing stops early on what the pairs show, which would bias
the verdict. The two questions take their pairs in proportion, so that a time budget that cuts
the run short leaves both with the same share done.
Figures, never verdicts that fail the bench: exit 0 unless the bench itself could not run.
"""
import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402
import pool  # noqa: E402
import report  # noqa: E402

AA_EVERY = 3  # an A/A pair after every this many profiled pairs of a question

# Student t, two-sided 95% (0.975 quantile), by degrees of freedom; past 120 the normal's.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
        17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
        25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
        120: 1.980}


def t975(df):
    """The 0.975 quantile of Student t with df degrees of freedom (df >= 1): the table's entry
    at the largest tabulated df not above it (conservative), 1.960 beyond 120."""
    if df > 120:
        return 1.960
    return T975[max(k for k in T975 if k <= df)]


def mean_ci(xs):
    """-> (mean, half-width of the 95% interval, standard error) of xs; None under 2 values."""
    if len(xs) < 2:
        return None
    m = statistics.fmean(xs)
    se = statistics.stdev(xs) / math.sqrt(len(xs))
    return m, t975(len(xs) - 1) * se, se



# Each question: its target, the measure read from each run, and its stated figure.
# A pair's value is log(with / without) of the measure: CPU seconds for the work target, wall
# seconds for the pool (fixed steps, so wall with / wall without = 1 / the throughput ratio).
QUESTIONS = [
    {"key": "cpu", "title": "bench/target.c", "measure": "cpu", "target_pct": 0.5,
     "figure": "CPU overhead", "target_text": "at most +0.5% CPU"},
    {"key": "pool", "title": "bench/threadpool.c", "measure": "wall", "target_pct": 1.0,
     "figure": "throughput loss", "target_text": "at most 1% throughput loss"},
]
PS199 = {"name": "perfscope 199 Hz (defaults)", "kind": "ps", "hz": 199, "env": {}}
AA = {"name": "A/A (no profiler either side)", "kind": "none", "hz": 0}


def run_pair(q, cfg, args, argv, rep, with_first):
    """-> (log of with / without of the question's measure, None), or (None, why not)."""
    if q["key"] == "cpu":
        p = analyze.one_pair(cfg, args, argv, rep, with_first)
    else:
        p = pool.pool_pair(cfg, args, rep, with_first)
    if p["error"]:
        return None, p["error"]
    a, b = p["with"][q["measure"]], p["without"][q["measure"]]
    if a <= 0 or b <= 0:
        return None, "a run measured no %s" % q["measure"]
    return math.log(a / b), None


def figure(q, logs):
    """-> (figure, lo, hi) in % as the question states it (CPU overhead = with / without - 1;
    throughput loss = 1 - without / with), from the mean log ratio and its 95% interval."""
    c = mean_ci(logs)
    if not c:
        return None
    m, h = c[0], c[1]
    if q["key"] == "cpu":
        f = lambda x: (math.exp(x) - 1) * 100  # noqa: E731
    else:
        f = lambda x: (1 - math.exp(-x)) * 100  # noqa: E731
    return f(m), f(m - h), f(m + h)


def verdict(q, fig):
    if fig[2] <= q["target_pct"]:
        return "met"
    if fig[1] > q["target_pct"]:
        return "MISSED"
    return "not resolved"


def resolved_after(q, logs):
    """The number of pairs from which the half-width (log scale, in %) stayed under half the
    target, so that the interval could no longer hold both 0 and the target: None if never."""
    at = None
    for n in range(3, len(logs) + 1):
        if mean_ci(logs[:n])[1] * 100 <= q["target_pct"] / 2:
            at = at or n
        else:
            at = None
    return at


def section(args, got, aa, machine):
    L = ["## The defaults' cost at 199 Hz, resolved (bench/resolve.py)", "",
         "Written by `bench/resolve.py` (run by `make bench` after the thread pool). Pairs without and "
         "with the shim at its defaults (PERFSCOPE_HZ=199 only) on the first table's work target and on the "
         "thread pool, the order inside a pair alternated (without first, then with first) so that an order "
         "effect cancels in the mean; an A/A pair (no profiler either side, alternated alike) after every %d "
         "profiled pairs. Pairs fixed beforehand: %d on the work target, %d on the pool "
         "(BENCH_RES_CPU_N, BENCH_RES_POOL_N), taken in proportion, within a time budget of %.0f s "
         "(BENCH_RES_BUDGET_S). %.0f s in all; load average at start %s, at end %s."
         % (AA_EVERY, args.cpu_n, args.pool_n, args.budget, machine["elapsed_s"], machine["loadavg_start"],
            machine["loadavg_end"]), "",
         "Figure: from the geometric mean of the pairs' ratios (with / without), its [95% interval] from "
         "Student t over the logarithms of the ratios. CPU = user+sys of the child (wait4); throughput = "
         "steps per second (fixed steps: wall without / wall with). sd = the standard deviation of one pair's "
         "log ratio, in %.", "",
         "| target | figure | pairs | perfscope 199 Hz [95%] | sd of one pair | A/A pairs | A/A [95%] "
         "| A/A sd | target | resolved after | verdict |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for q in QUESTIONS:
        xs, ys = got[q["key"]], aa[q["key"]]
        fx, fy = figure(q, xs), figure(q, ys)
        v = verdict(q, fx) if fx else "-"
        at = resolved_after(q, xs)
        L.append("| %s | %s | %d | %s | %s | %d | %s | %s | %s | %s | %s |" % (
            q["title"], q["figure"], len(xs),
            "%+.2f%% [%+.2f..%+.2f]" % fx if fx else "-",
            "%.2f%%" % (statistics.stdev(xs) * 100) if len(xs) > 1 else "-", len(ys),
            "%+.2f%% [%+.2f..%+.2f]" % fy if fy else "-",
            "%.2f%%" % (statistics.stdev(ys) * 100) if len(ys) > 1 else "-",
            q["target_text"], "%d pairs" % at if at else "not in these pairs", v))
        if not fx:
            continue
        notes.append("- %s, %s at 199 Hz (defaults): %+.2f%% [%+.2f..%+.2f] over %d pairs -> %s (target: %s)."
                     % (q["title"], q["figure"], fx[0], fx[1], fx[2], len(xs), v, q["target_text"]))
        if fy and not fy[1] <= 0 <= fy[2]:
            notes.append("- %s: the A/A interval does not hold 0: the machine drifted more than the alternation "
                         "cancels; the figure above carries that error too." % q["title"])
        if not at:
            need = math.ceil(len(xs) * (mean_ci(xs)[1] * 100 / (q["target_pct"] / 2)) ** 2)
            notes.append("- %s: at this spread the half-width falls under %.2f%% after about %d pairs."
                         % (q["title"], q["target_pct"] / 2, need))
    L += [""] + notes
    errs = machine["errors"]
    if errs:
        L.append("- pairs left out: %d (%s)" % (len(errs), "; ".join(sorted(set(errs)))))
    L.append("- met: the whole interval is at or under the target; MISSED: the whole interval is over it; "
             "otherwise not resolved: the cost lies within the interval's half-width of the target.")
    return L


def main():
    ap = argparse.ArgumentParser()
    analyze.run_args(ap)
    ap.add_argument("--pool", required=True, help="bench/threadpool.c, built")
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--budget", type=float, default=2400, help="stop starting pairs after this many seconds")
    ap.add_argument("--cpu-n", type=int, default=240, help="profiled pairs on the work target")
    ap.add_argument("--pool-n", type=int, default=120, help="profiled pairs on the thread pool")
    ap.add_argument("--iters", default="")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    argv = [os.path.abspath(args.target)] + ([args.iters] if args.iters else [])
    analyze.RUN_TIMEOUT_S = max(analyze.RUN_TIMEOUT_S, pool.POOL_TIMEOUT_S)
    machine = report.machine_info()
    want = {"cpu": args.cpu_n, "pool": args.pool_n}
    got = {q["key"]: [] for q in QUESTIONS}
    aa = {q["key"]: [] for q in QUESTIONS}
    tries = {q["key"]: 0 for q in QUESTIONS}
    errors = []
    start = time.monotonic()
    print("bench: resolving the defaults' cost at 199 Hz (%s), budget %.0f s; load %s"
          % (", ".join("%s: %d pairs" % (q["title"], want[q["key"]]) for q in QUESTIONS), args.budget,
             machine["loadavg_start"]), flush=True)
    done = 0
    while True:
        # the question furthest behind its share goes next
        left = [q for q in QUESTIONS if tries[q["key"]] < want[q["key"]]]
        elapsed = time.monotonic() - start
        if not left or (done and elapsed + elapsed / done > args.budget):
            break
        q = min(left, key=lambda q: tries[q["key"]] / want[q["key"]])
        xs, ys = got[q["key"]], aa[q["key"]]
        tries[q["key"]] += 1
        x, err = run_pair(q, PS199, args, argv, done, with_first=tries[q["key"]] % 2 == 0)
        if err:
            errors.append(err)
        else:
            xs.append(x)
        if tries[q["key"]] % AA_EVERY == 0:
            y, err = run_pair(q, AA, args, argv, done, with_first=len(ys) % 2 == 1)
            if err:
                errors.append(err)
            else:
                ys.append(y)
        done += 1
        if done % 20 == 0:
            print("  %.0f s  %s" % (time.monotonic() - start, "  ".join(
                "%s %d pairs %+.2f%% +- %.2f" % (q["key"], len(got[q["key"]]), mean_ci(got[q["key"]])[0] * 100,
                                                 mean_ci(got[q["key"]])[1] * 100)
                for q in QUESTIONS if len(got[q["key"]]) > 1)), flush=True)
    machine.update(elapsed_s=time.monotonic() - start, loadavg_end=report.loadavg(), errors=errors)
    pool.replace_section(args.results, "## The defaults' cost at 199 Hz, resolved",
                         section(args, got, aa, machine))
    print("bench: resolved section written (%.0f s)" % machine["elapsed_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
