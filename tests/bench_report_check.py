"""bench_report_check.py: the verdicts bench/report.py writes under the first tables of
bench/RESULTS.md, on made-up pairs (no run). A verdict is a claim: the figure must carry it.

- At 997 Hz a cost a sample that did not come out above zero (the pairs' noise) is "not
  measured", never "met"; a positive one over 20 us is MISSED by its excess.
- A CPU overhead within the A/A noise floor of its target is "not resolved", and says nothing
  more: "but only by taking N% of the asked samples" goes with "met" alone.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.environ["ROOT"], "bench"))
import report  # noqa: E402
from checks import check, finish  # noqa: E402


def pair(cpu_without, cpu_with, distinct=None):
    side = lambda c: {"wall": c, "cpu": c, "user": c, "sys": 0.0}  # noqa: E731
    return {"error": None, "without": side(cpu_without), "with": side(cpu_with),
            "samples": None if distinct is None else {"distinct": distinct, "hz_delivered": 0, "dropped": 0}}


def rows_of(cfg_pairs):
    return [report.summarize(cfg, pairs) for cfg, pairs in cfg_pairs]


AA = ({"name": "A/A", "kind": "none", "hz": 0}, [pair(1.0, 1.0 + d) for d in (-0.002, 0, 0.002)])


def lines_for(cfg, pairs):
    return report._reading(rows_of([AA, (cfg, pairs)]), {"kernel_hz": 250})


def line_with(lines, *words):
    got = [l for l in lines if all(w in l for w in words)]
    return got[0] if got else ""


# 997 Hz, 2.5 CPU s, 2490 samples (yield 99.9%), extra CPU below zero: no cost to judge
cfg997 = {"name": "ps 997 noise", "kind": "ps", "hz": 997, "clock": "perf", "unwind": "libunwind", "delivery": "ring"}
l = line_with(lines_for(cfg997, [pair(2.5, 2.5 - 0.001, 2490)] * 3), "us of target CPU a delivered sample", "ps 997 noise")
check(l.endswith("not measured: the extra CPU a sample is not above zero in these pairs"),
      "997 Hz, a cost a sample below zero: not measured, not met: %r" % l)
l = line_with(lines_for(cfg997, [pair(2.5, 2.5 + 0.1, 2590)] * 3), "us of target CPU a delivered sample", "ps 997 noise")
check(l.endswith("MISSED by 18.6 us"), "997 Hz, 38.6 us a sample: MISSED by 18.6 us: %r" % l)

# 199 Hz within the noise floor of its 0.5% target, with a low yield: not resolved, nothing else
cfg199 = {"name": "ps 199 low yield", "kind": "ps", "hz": 199, "clock": "timer", "unwind": "libunwind",
          "delivery": "ring"}
l = line_with(lines_for(cfg199, [pair(2.5, 2.5 * 1.004, 300)] * 3), "overhead <=", "ps 199 low yield")
check("not resolved" in l and "only by taking" not in l,
      "199 Hz within the noise of its target: not resolved, no 'but only by taking': %r" % l)
l = line_with(lines_for(cfg199, [pair(2.5, 2.5 * 1.0001, 300)] * 3), "overhead <=", "ps 199 low yield")
check("met" in l and "only by taking" in l, "199 Hz well under its target with a yield of 60%%: met, but only by taking: %r" % l)
finish()
