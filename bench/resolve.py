"""bench/resolve.py: the overhead at the defaults, resolved by many pairs (standard library only).

Run by bench/run.sh after bench/pool.py; writes its own section of bench/RESULTS.md, replacing
its earlier self. It answers one question the min-max spreads of the first table cannot: is the
CPU cost at the default rates under the target? A few pairs cannot say (one A/A pair alone
varies by about 1%), so this runs rounds of alternated pairs on bench/target.c - an A/A pair
(unprofiled both sides) and a pair at 199 Hz with the shim at its defaults otherwise (target:
at most +0.5% CPU) - for a time budget, and reports the mean CPU ratio of each with a 95% confidence interval (Student t
over the paired ratios), the overhead as the difference from the A/A mean (the order inside a
pair - without first - biases both alike) and how many pairs it took until the interval's
half-width fell under half the target, the point from which the figure resolves the target.
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


def diff_ci(a, b):
    """The mean of a minus the mean of b, with the 95% half-width from Welch's degrees of freedom."""
    ca, cb = mean_ci(a), mean_ci(b)
    if not ca or not cb:
        return None
    va, vb = ca[2] ** 2, cb[2] ** 2
    se = math.sqrt(va + vb)
    if se == 0:
        return ca[0] - cb[0], 0.0
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return ca[0] - cb[0], t975(max(1, int(df))) * se


def configs(rates):
    c = [{"name": "A/A (no profiler either side)", "kind": "none", "hz": 0, "target_pct": None}]
    for hz, pct in rates:
        c.append({"name": "perfscope %d Hz (defaults)" % hz, "kind": "ps", "hz": hz,
                  "env": {}, "target_pct": pct})
    return c


def resolved_at(ratios, aa, target_pct):
    """The number of pairs from which the overhead's 95% half-width stays under half the target
    (so the interval cannot straddle both 0 and the target): None if it never does."""
    at = None
    for n in range(2, min(len(ratios), len(aa)) + 1):
        d = diff_ci(ratios[:n], aa[:n])
        if d and d[1] * 100 <= target_pct / 2:
            if at is None:
                at = n
        else:
            at = None
    return at


def section(args, cfgs, got, machine):
    aa = got[cfgs[0]["name"]]
    L = ["## The defaults' CPU cost, resolved (bench/resolve.py)", "",
         "Written by `bench/resolve.py` (run by `make bench` last among the pairs). Rounds of alternated "
         "pairs on bench/target.c (the first table's target): an A/A pair and a pair at 199 Hz with the shim "
         "at its defaults otherwise (PERFSCOPE_HZ only), the order rotated each round, until the time budget "
         "(%.0f s; BENCH_RES_BUDGET_S) or %d rounds. %d rounds done in %.0f s; load average at start %s, at end %s."
         % (args.budget, args.max_n, machine["rounds"], machine["elapsed_s"], machine["loadavg_start"],
            machine["loadavg_end"]), "",
         "CPU ratio = with / without (user+sys of the child). Mean [95% interval], Student t over the pairs. "
         "Overhead = the mean ratio minus the A/A mean ratio, its interval from both (Welch). "
         "Resolved after = the number of pairs from which the overhead's half-width stayed under half the "
         "target, so that the figure tells met from missed.", "",
         "| config | pairs ok | mean CPU ratio [95%] | sd of one pair | overhead [95%] | target | resolved after | verdict |",
         "|---|---|---|---|---|---|---|---|"]
    notes = []
    for c in cfgs:
        xs = got[c["name"]]
        ci = mean_ci(xs)
        row = "| %s | %d | %s | %s |" % (
            c["name"], len(xs),
            "%.4f [%.4f-%.4f]" % (ci[0], ci[0] - ci[1], ci[0] + ci[1]) if ci else "-",
            "%.2f%%" % (statistics.stdev(xs) * 100) if len(xs) > 1 else "-")
        if c["target_pct"] is None:
            row += " - | - | - | - |"
        else:
            d = diff_ci(xs, aa)
            at = resolved_at(xs, aa, c["target_pct"])
            if not d:
                row += " - | <= +%.1f%% | - | - |" % c["target_pct"]
            else:
                lo, hi = (d[0] - d[1]) * 100, (d[0] + d[1]) * 100
                if hi <= c["target_pct"]:
                    verdict = "met"
                elif lo > c["target_pct"]:
                    verdict = "MISSED"
                else:
                    verdict = "not resolved"
                row += " %+.2f%% [%+.2f..%+.2f] | <= +%.1f%% | %s | %s |" % (
                    d[0] * 100, lo, hi, c["target_pct"], "%d pairs" % at if at else "not within the budget",
                    verdict)
                notes.append("- %s: overhead %+.2f%% [%+.2f..%+.2f] over %d pairs -> %s (target <= +%.1f%% CPU)."
                             % (c["name"], d[0] * 100, lo, hi, len(xs), verdict, c["target_pct"]))
                if not at and d[1] > 0:
                    # the half-width shrinks as 1/sqrt(pairs): how many this spread needs
                    need = math.ceil(len(xs) * (d[1] * 100 / (c["target_pct"] / 2)) ** 2)
                    notes.append("- At this run's spread the half-width falls under %.2f%% after about %d pairs "
                                 "of each (%.0f s at this run's pace)."
                                 % (c["target_pct"] / 2, need, need * machine["elapsed_s"] / max(1, machine["rounds"])))
        L.append(row)
    L += [""] + notes
    errs = machine["errors"]
    if errs:
        L.append("- pairs left out: %d (%s)" % (len(errs), "; ".join(sorted(set(errs)))))
    L.append("- met: the whole interval is at or under the target; MISSED: the whole interval is over it; "
             "otherwise not resolved in this budget.")
    return L


def main():
    ap = argparse.ArgumentParser()
    analyze.run_args(ap)
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--max-n", type=int, default=80)
    ap.add_argument("--iters", default="")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    argv = [os.path.abspath(args.target)] + ([args.iters] if args.iters else [])
    # 199 Hz only: the first table already resolves the 997 Hz target (2%, several times its
    # A/A spread); 0.5% at 199 Hz is under one pair's noise, and each rate more halves the rounds.
    cfgs = configs([(199, 0.5)])
    machine = report.machine_info()
    got = {c["name"]: [] for c in cfgs}
    errors = []
    start = time.monotonic()
    rounds = 0
    print("bench: resolving the defaults' cost, %d configurations, budget %.0f s; load %s"
          % (len(cfgs), args.budget, machine["loadavg_start"]), flush=True)
    for rep in range(args.max_n):
        elapsed = time.monotonic() - start
        if rounds and elapsed + elapsed / rounds > args.budget:
            break
        order = cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
        for c in order:
            p = analyze.one_pair(c, args, argv, rep)
            if p["error"]:
                errors.append(p["error"])
            elif p["without"]["cpu"]:
                got[c["name"]].append(p["with"]["cpu"] / p["without"]["cpu"])
        rounds += 1
        print("  round %d  %s" % (rounds, "  ".join(
            "%s %.4f" % (c["name"].split(" (")[0], got[c["name"]][-1]) for c in cfgs if got[c["name"]])),
            flush=True)
    machine.update(rounds=rounds, elapsed_s=time.monotonic() - start, loadavg_end=report.loadavg(),
                   errors=errors)
    pool.replace_section(args.results, "## The defaults' CPU cost, resolved", section(args, cfgs, got, machine))
    print("bench: resolved section written (%.0f s)" % machine["elapsed_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
