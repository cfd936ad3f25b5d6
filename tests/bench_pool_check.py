"""bench_pool_check.py: bench/threadpool.c's measure as make bench reads it (bench/analyze.py's
run_once, bench/pool.py's throughput ratio). argv[1]: the pool, built as bench/run.sh builds it.

- The warm-up steps run (the checksum of 3 timed steps after 2 warm-up steps is that of 5 steps
  with none, not that of 3: the vector settles after some 300 steps, so few are compared) and
  are not timed: 10 timed steps after 20,000 warm-up steps report a rate
  far above 10 steps over the whole run's wall time (the run's start and warm-up left out).
- Bad arguments (not a count, out of range, one too many): one usage line, exit status 2.
- run_once reads the rate back as seconds per step; a target that prints none gives None, and
  the throughput ratio is unprofiled over profiled time per step.
- The 997 Hz verdict against `perf record -g` (pool_section, on made-up pairs): MISSED when
  perfscope's ratios all lie clearly under perf's, met when above, not resolved when the two
  overlap (a difference of their means within Welch's interval); the same, on its own line, for
  perfscope with the kernel's call chains (PERFSCOPE_UNWIND=kernel).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["ROOT"], "bench"))
import analyze  # noqa: E402
import pool  # noqa: E402
from checks import check, require, finish  # noqa: E402

POOL = sys.argv[1]
WORK = sys.argv[2]


def out_of(*args):
    p = subprocess.run([POOL] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


rc, a, _ = out_of(3, 2)
rc5, b, _ = out_of(5, 0)
rc3, c, _ = out_of(3, 0)
require(rc == 0 and rc5 == 0 and rc3 == 0, "the pool runs (exit statuses %d, %d, %d)" % (rc, rc5, rc3))
check("warmup 2 steps 3 steps_per_s " in a, "the pool names its warm-up and timed steps: %r" % a)
ca, cb, cc = (x.splitlines()[0] for x in (a, b, c))
check(ca.startswith("checksum ") and ca == cb and ca != cc,
      "3 timed steps after 2 warm-up steps end where 5 steps do, not where 3 do (%s, %s, %s)" % (ca, cb, cc))

log = os.path.join(WORK, "pool.log")
r = analyze.run_once([POOL, "10", "20000"], dict(os.environ), log)
require(r["rc"] == 0 and r["step_s"], "run_once reads the rate of 10 timed steps after 20000 warm-up steps: %r" % r)
whole_rate = 10 / r["wall"]
check(1 / r["step_s"] > 10 * whole_rate,
      "the rate counts the timed steps' time only: %.0f steps/s, against %.1f for 10 steps over the run's %.3f s"
      % (1 / r["step_s"], whole_rate, r["wall"]))

for args in ((0,), (-1,), (10, -1), ("x",), (10, "20k"), ("2000000000",), (10, 10, 10)):
    rc, out, err = out_of(*args)
    check(rc == 2 and err.count("\n") == 1 and "usage" in err and not out,
          "threadpool %s: one usage line, exit status 2 (rc %d, %r)" % (" ".join(map(str, args)), rc, err))

r = analyze.run_once(["/bin/sh", "-c", "echo checksum 1"], dict(os.environ), log)
check(r["step_s"] is None and r["out"] == "checksum 1", "a target that prints no rate: step_s None (%r)" % r)
pair = {"without": {"step_s": 1 / 1000.0}, "with": {"step_s": 1 / 990.0}}
check(abs(pool.throughput_ratio(pair) - 0.99) < 1e-12,
      "990 steps/s profiled against 1000 unprofiled: a throughput ratio of 0.99 (%r)" % pool.throughput_ratio(pair))

class A:
    steps, n = 100, 10


def fake_pairs(ratios):
    return [{"error": None, "samples": 1000, "with": {"cpu": 1.0, "step_s": 1.0 / r},
             "without": {"cpu": 1.0, "step_s": 1.0}} for r in ratios]


CFGS = pool.pool_configs(False, True)
MACHINE = {"nproc": 2, "loadavg_start": "0", "loadavg_end": "0", "paranoid": "2"}


def verdict_997(ps, perf, kernel=None, which="no worse than `perf record -g`"):
    pairs = {c["name"]: fake_pairs([1.0 + 0.001 * (i % 3) for i in range(10)]) for c in CFGS}
    pairs["perfscope 997 Hz (defaults)"] = fake_pairs(ps)
    pairs["perf record -g -F 997"] = fake_pairs(perf)
    if kernel:
        pairs[pool.KERNEL_997] = fake_pairs(kernel)
    line = [x for x in pool.pool_section(A, CFGS, pairs, MACHINE, "") if which in x]
    return line[0].rsplit("-> ", 1)[1] if line else "no line"


spread = [-0.01, -0.005, 0, 0.005, 0.01] * 2
check(verdict_997([0.91 + d for d in spread], [0.94 + d for d in spread]) == "MISSED",
      "997 Hz: perfscope 0.91 against perf 0.94 (spread +-1%%): MISSED (%s)"
      % verdict_997([0.91 + d for d in spread], [0.94 + d for d in spread]))
check(verdict_997([0.95 + d for d in spread], [0.92 + d for d in spread]) == "met",
      "997 Hz: perfscope 0.95 against perf 0.92: met")
check(verdict_997([0.935 + 3 * d for d in spread], [0.94 + 3 * d for d in spread]) == "not resolved",
      "997 Hz: 0.935 against 0.94 with a spread of +-3%%: not resolved (%s)"
      % verdict_997([0.935 + 3 * d for d in spread], [0.94 + 3 * d for d in spread]))

# the kernel's call chains against perf -g: a line of its own, judged the same way
KLINE = "with the kernel's call chains"
check(verdict_997([0.91 + d for d in spread], [0.94 + d for d in spread], [0.96 + d for d in spread], KLINE) == "met",
      "997 Hz, kernel call chains 0.96 against perf 0.94: met, beside the defaults' MISSED")
check(verdict_997([0.91 + d for d in spread], [0.94 + d for d in spread], [0.90 + d for d in spread], KLINE) == "MISSED",
      "997 Hz, kernel call chains 0.90 against perf 0.94: MISSED")
check(any(c["name"] == pool.KERNEL_997 and c["env"] == {"PERFSCOPE_UNWIND": "kernel"} for c in CFGS),
      "the pool's configurations hold perfscope 997 Hz with PERFSCOPE_UNWIND=kernel")

finish()
