"""bench_resolve_check.py: bench/resolve.py's statistics on simulated pairs, where the true cost
and the order effect are known (fixed seed: the same draws every run).

- The figure is unbiased and its 95% interval covers the true cost about 95 times in 100, with
  an order effect 3x the cost and the order groups of unequal size (where a plain mean of the
  pairs would carry the order effect into the figure).
- The order effect reported is the one put in.
- The orders drawn beforehand are half each way, the same on every call, and not the plain
  alternation that tied them to the run before the pair.
- The figures in % and the target on the log scale agree; the verdicts at their bounds.
- The section renders with 0, 1 and 2 pairs (no crash on a run cut short).
"""
import math
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.environ["ROOT"], "bench"))
import resolve  # noqa: E402
from checks import check, finish  # noqa: E402

CPU, POOL = resolve.QUESTIONS[0], resolve.QUESTIONS[1]
rng = random.Random(20261206)


def simulate(n_nf, n_wf, cost, order, sd):
    """Pairs of log ratios: the true cost, +order when the profiled run goes second, -order first
    (no after-effect: the run before each pair is not a shim run)."""
    pairs = [(math.log(1 + cost) + order + rng.gauss(0, sd), False, 0) for _ in range(n_nf)]
    pairs += [(math.log(1 + cost) - order + rng.gauss(0, sd), True, 0) for _ in range(n_wf)]
    rng.shuffle(pairs)
    return pairs


def simulate_sequence(n, cost, order, after, sd, after_out=None):
    """Runs as resolve.py makes them: n profiled pairs in drawn orders, an A/A pair after every
    AA_EVERY; each run's log measure is noise + the cost (the profiled run) + order (a pair's
    second run) + after (a pair's run without right after its own shim run) + after_out (a
    pair's first run after the shim run that ended the pair before; `after` unless given).
    -> (profiled pairs, A/A pairs), each (log ratio, with_first, prev) with prev whether the
    run before the pair was a shim run."""
    after_out = after if after_out is None else after_out
    got, aa, prev = [], [], None
    orders, aa_orders = resolve.draw_orders("sim", n), resolve.draw_orders("sim-aa", n)
    for i in range(n):
        for shim, wf, into in [(True, orders[i], got)] + (
                [(False, aa_orders[i // resolve.AA_EVERY], aa)] if (i + 1) % resolve.AA_EVERY == 0 else []):
            p = 0 if prev is None else prev
            first_is_with = wf
            first = rng.gauss(0, sd) + after_out * p + (cost if shim and first_is_with else 0)
            first_shim = shim and first_is_with
            second = rng.gauss(0, sd) + order + after * first_shim + (cost if shim and not first_is_with else 0)
            w, wo = (first, second) if first_is_with else (second, first)
            into.append((w - wo, wf, prev))
            prev = int(shim and not first_is_with)
    return got, aa


ests, covered, orders = [], 0, []
RUNS = 300
for _ in range(RUNS):
    pairs = simulate(140, 100, 0.003, 0.01, 0.014)
    f = resolve.figure(CPU, pairs)
    ests.append(f[0])
    covered += f[1] <= 0.3 <= f[2]
    orders.append(resolve.order_effect(pairs)[0])
bias = statistics.fmean(ests) - 0.3
check(abs(bias) < 0.03, "the figure's mean over %d runs is the true +0.30%% (off by %+.3f%%)" % (RUNS, bias))
check(0.91 <= covered / RUNS <= 0.99, "the 95%% interval covers the true cost in %d of %d runs" % (covered, RUNS))
check(abs(statistics.fmean(orders) - 0.01) < 0.001, "the order effect is the +1%% put in (%.4f)"
      % statistics.fmean(orders))
plain = statistics.fmean(p[0] for p in pairs)
check(abs(plain - math.log(1.003)) > 0.001, "(the simulation's plain mean does carry the order effect: %.4f)" % plain)

# An after-effect: a run after a shim run takes 0.4% more. The order groups' figure is then low
# (with the shim first, its own pair's run without pays the after-effect); the fit over the run's
# sequence gives the cost, the after-effect and the order effect put in, and its interval covers.
RUNS_SEQ = 300  # the fit's cost varies by 0.34% run to run here: 3 standard errors of the mean are 0.06%


def fit_trials(after_out=None):
    """RUNS_SEQ simulated runs of 240 profiled pairs (cost 0.5%, order 0.2%, after-effect 0.4%,
    after_out as given) -> the mean of each fitted figure over the runs ("cost", "in", "out",
    "order", "aa", and the order groups' "og"), and "cover": the runs whose interval held the cost."""
    v = {k: [] for k in ("cost", "in", "out", "order", "aa", "og")}
    cover = 0
    for _ in range(RUNS_SEQ):
        got_s, aa_s = simulate_sequence(240, math.log(1.005), 0.002, 0.004, 0.016, after_out=after_out)
        fits = resolve.program_fits({"cpu": got_s}, {"cpu": aa_s})
        f = resolve.fitted(CPU, fits)
        cover += f[1] <= 0.5 <= f[2]
        v["cost"].append(f[0])
        v["in"].append(resolve.fitted_effect(CPU, fits, resolve.AFTER_IN)[0])
        v["out"].append(resolve.fitted_effect(CPU, fits, resolve.AFTER_OUT)[0])
        v["order"].append(resolve.fitted_effect(CPU, fits, resolve.ORDER)[0])
        v["aa"].append(resolve.fitted(CPU, fits, "-aa")[0])
        v["og"].append(resolve.figure(CPU, got_s)[0])
    return dict({k: statistics.fmean(x) for k, x in v.items()}, cover=cover)


t = fit_trials()
check(abs(t["cost"] - 0.5) < 0.06, "with an after-effect of 0.4%%, the fitted cost is the +0.50%% put in "
      "(%.3f%% over %d runs)" % (t["cost"], RUNS_SEQ))
check(0.91 <= t["cover"] / RUNS_SEQ <= 0.99, "its 95%% interval covers the cost in %d of %d runs" % (t["cover"], RUNS_SEQ))
check(abs(t["in"] - 0.4) < 0.1, "the fitted after-effect is the 0.4%% put in (%.3f%%)" % t["in"])
check(abs(t["order"] - 0.2) < 0.05, "the fitted order effect is the 0.2%% put in (%.3f%%)" % t["order"])
check(abs(t["aa"]) < 0.05, "the A/A constant is 0 (%.3f%%)" % t["aa"])
check(t["og"] < 0.5 - 0.08, "(the order groups' figure is low by about half the after-effect: %.3f%%)" % t["og"])
check(resolve.fit([("cpu", 0.0, True, 0, True)] * 3) is None, "too few pairs: no fit")
check(resolve.fit([("cpu", 0.01 * i, i % 2 == 0, None, True) for i in range(20)]) is None,
      "no pair's predecessor known: no fit")
check(resolve.after_in(True, True) == -1 and resolve.after_in(False, True) == 0 and resolve.after_in(True, False) == 0
      and resolve.after_out(True, 1) == 1 and resolve.after_out(False, 1) == -1 and resolve.after_out(True, 0) == 0,
      "the after-effects' covariates: own shim run first -1 (else 0); the pair before's shim run +1 with the with "
      "side first, -1 with the without side first")
# The two after-effects apart (0.4% right after the pair's own shim run, none a pair later, as
# when the folder's removal between pairs takes the after-effect with it): a single after-effect
# term would leave the cost off by about half their difference; the fit gives all three.
t = fit_trials(after_out=0.0)
check(abs(t["cost"] - 0.5) < 0.06 and 0.91 <= t["cover"] / RUNS_SEQ <= 0.99,
      "after-effects of 0.4%% and 0: the fitted cost is the +0.50%% put in (%.3f%%), covered in %d of %d runs"
      % (t["cost"], t["cover"], RUNS_SEQ))
check(abs(t["in"] - 0.4) < 0.1 and abs(t["out"]) < 0.1,
      "the two after-effects fitted apart: %.3f%% (0.4 put in) and %.3f%% (0)" % (t["in"], t["out"]))

o = resolve.draw_orders("cpu-ps", 240)
check(sum(o) == 120, "240 orders drawn: 120 with first (%d)" % sum(o))
check(o == resolve.draw_orders("cpu-ps", 240), "the orders are the same on every call")
check(o != [i % 2 == 1 for i in range(240)], "the orders are shuffled, not alternated")
check(sum(resolve.draw_orders("x", 7)) == 3, "an odd count: the odd one out without first")

for q in (CPU, POOL):
    t = resolve.target_log(q)
    check(abs(resolve.to_pct(q, t) - q["target_pct"]) < 1e-9, "%s: the target on the log scale maps back" % q["key"])
    check(resolve.verdict(q, (0, -1, q["target_pct"])) == "met", "%s: an interval ending at the target: met" % q["key"])
    check(resolve.verdict(q, (0, q["target_pct"] + 0.01, 9)) == "MISSED", "%s: above the target: MISSED" % q["key"])
    check(resolve.verdict(q, (0, -1, q["target_pct"] + 0.01)) == "not resolved", "%s: across it: not resolved" % q["key"])
check(resolve.to_pct(POOL, math.log(1.02)) < 2 < resolve.to_pct(CPU, math.log(1.02)),
      "a 2% longer time per step is a 1.96% throughput loss, a 2% higher CPU a +2% overhead")


class Args:
    budget = 10


machine = {"elapsed_s": 1, "loadavg_start": "0", "loadavg_end": "0", "errors": ["x"]}
keys = [q["key"] for q in resolve.QUESTIONS]
for n in (0, 1, 2):
    pairs = simulate(n - n // 2, n // 2, 0.003, 0, 0.01)
    got = {k: pairs for k in keys}
    text = "\n".join(resolve.section(Args, got, got, {k: n for k in keys}, {k: 240 for k in keys}, machine))
    check("| bench/target.c |" in text and "(defaults): the time budget stopped the run after %d of 240" % n in text
          and "(PERFSCOPE_HZ=0): the time budget stopped the run after %d of 240" % n in text,
          "the section renders with %d pairs" % n)

# sampling's own share on the pool: the 199 Hz pairs less the sampling-off pairs
got = {"pool": [(math.log(1.01) + d, wf, 0) for d in (-0.001, 0.001) for wf in (False, True)],
       "pool_hz0": [(math.log(0.97) + d, wf, 0) for d in (-0.001, 0.001) for wf in (False, True)]}
share = resolve.sampling_share(got)
check(abs(share[0] - (1 - 0.97 / 1.01) * 100) < 1e-6 and share[1] < share[0] < share[2],
      "sampling's share: a pool 1%% slower with the shim and 3%% faster with it not sampling is a 3.96%% loss (%s)"
      % (share,))
check(resolve.sampling_share({"pool": got["pool"], "pool_hz0": []}) is None, "no share without sampling-off pairs")
# The section written again from saved pairs (--from-pairs): the same figures as from the pairs
# in memory.
import json  # noqa: E402
import tempfile  # noqa: E402
got_s, aa_s = simulate_sequence(60, math.log(1.005), 0.002, 0.004, 0.016)
log = [{"question": "cpu", "config": resolve.PS199["name"] if i < len(got_s) else resolve.AA["name"],
        "with_first": p[1], "prev_shim": p[2], "log_ratio": p[0], "error": None}
       for i, p in enumerate(got_s + aa_s)]
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "pairs.json"), "w") as f:
        json.dump({"machine": {"elapsed_s": 1, "loadavg_start": "0", "loadavg_end": "0"},
                   "want": {"cpu": 60, "pool": 0, "pool_hz0": 0, "pool_idle": 0}, "budget": 10, "pairs": log}, f)

    class FromArgs:
        results = os.path.join(d, "R.md")
        from_pairs = os.path.join(d, "pairs.json")
        budget = 0
    resolve.from_pairs(FromArgs)
    text = open(FromArgs.results).read()
    want_fig = resolve.fmt_fig(resolve.fitted(CPU, resolve.program_fits({"cpu": got_s}, {"cpu": aa_s})))
    check("over 60 pairs (fitted)" in text and want_fig in text,
          "--from-pairs writes the section with the fitted figure of the saved pairs (%s)" % want_fig)
finish()
