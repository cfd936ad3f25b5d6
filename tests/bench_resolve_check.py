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
    """Pairs of log ratios: the true cost, +order when the profiled run goes second, -order first."""
    pairs = [(math.log(1 + cost) + order + rng.gauss(0, sd), False) for _ in range(n_nf)]
    pairs += [(math.log(1 + cost) - order + rng.gauss(0, sd), True) for _ in range(n_wf)]
    rng.shuffle(pairs)
    return pairs


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
plain = statistics.fmean(x for x, _ in pairs)
check(abs(plain - math.log(1.003)) > 0.001, "(the simulation's plain mean does carry the order effect: %.4f)" % plain)

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
got = {"pool": [(math.log(1.01) + d, wf) for d in (-0.001, 0.001) for wf in (False, True)],
       "pool_hz0": [(math.log(0.97) + d, wf) for d in (-0.001, 0.001) for wf in (False, True)]}
share = resolve.sampling_share(got)
check(abs(share[0] - (1 - 0.97 / 1.01) * 100) < 1e-6 and share[1] < share[0] < share[2],
      "sampling's share: a pool 1%% slower with the shim and 3%% faster with it not sampling is a 3.96%% loss (%s)"
      % (share,))
check(resolve.sampling_share({"pool": got["pool"], "pool_hz0": []}) is None, "no share without sampling-off pairs")
finish()
