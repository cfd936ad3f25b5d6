#!/usr/bin/env python3
"""judge_check.py: checks `perfscope-report diff` and `perfscope-report noise` against
compare.py's rules (the reference harness's A/B judgement).

1. A table of cases worked out by hand from the rules: missing values, zero means, absolute
   against relative floors, overlapping arms, measured noise above the fixed floor, mixed
   verdicts giving tradeoff, dropped (failed, perturbed) and dirty runs.
2. Permutation p-values on hand-computed cases (and against a brute force here), the bootstrap
   interval's determinism, the too-few-runs warning for 3 against 3.
3. Hostile run.json, noise and matrix files: exit 2, nothing on stdout, one stderr line.
4. Exactness: compare.py's own source, cut out of the reference text, run on random run sets
   beside ours: the same verdicts, keys and rounded numbers, the same markdown table, the same
   noise floors.

Run by tests/t_tools_judge.sh from a scratch folder: judge_check.py PERFSCOPE_REPORT REFERENCE.
It must never write outside the current folder. Standard library only. Checks as tests/checks.py:
one FAIL line per failed check, the count at the end, exit 1 when any failed.
"""

import concurrent.futures
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import types

from checks import check, finish

TOOL = sys.argv[1] if len(sys.argv) > 1 else "perfscope-report"
REFERENCE = sys.argv[2] if len(sys.argv) > 2 else ""
RANDOM_CASES = int(os.environ.get("JUDGE_RANDOM_CASES", "200"))
KEYS = {
    "prefill_tps": ("throughput", "prefill", "tokens_per_s"),
    "decode_tps": ("throughput", "decode", "tokens_per_s"),
    "gpu_peak_mib": ("memory", "gpu", "peak_above_baseline_total_mib"),
    "gpu_peak_max_device_mib": ("memory", "gpu", "peak_above_baseline_max_device_mib"),
    "host_anon_peak_mib": ("memory", "host", "anon_peak_mib"),
    "load_s": ("groups", "load", "wall_s"),
    "prefill_j_per_token": ("energy", "prefill_j_per_token"),
    "decode_j_per_token": ("energy", "decode_j_per_token"),
}
ABSENT = object()


def run_tool(*args):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, errors="replace", timeout=120)
    return p.returncode, p.stdout, p.stderr


def make_run(status="ok", perturbed=ABSENT, machine_before=ABSENT, **metrics):
    """A run.json object; metrics by compare.py's names, value None for JSON null."""
    run = {}
    if status is not ABSENT:
        run["status"] = status
    if perturbed is not ABSENT:
        run["perturbed"] = perturbed
    if machine_before is not ABSENT:
        run["machine_before"] = machine_before
    for name, value in metrics.items():
        node = run
        keys = KEYS[name]
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return run


_counter = itertools.count()


def write_side(runs, where=None):
    """Writes each run as <folder>/rNN/run.json; returns the folder of run folders."""
    where = where or f"set{next(_counter)}"
    os.makedirs(where)
    for i, run in enumerate(runs):
        os.makedirs(f"{where}/r{i:02d}")
        with open(f"{where}/r{i:02d}/run.json", "w") as f:
            json.dump(run, f)
    return where


def write_json(obj, name=None):
    name = name or f"file{next(_counter)}.json"
    with open(name, "w") as f:
        json.dump(obj, f)
    return name


def ours(a_args, b_args, *opts, as_json=True):
    args = ["diff", *opts] + (["--json"] if as_json else []) + list(a_args) + ["--"] + list(b_args)
    rc, out, err = run_tool(*args)
    if as_json:
        try:
            return rc, json.loads(out) if rc == 0 else None, err
        except ValueError:
            check(False, f"diff --json printed no JSON: {out[:300]!r}")
            return rc, None, err
    return rc, out, err


# ---------------------------------------------------------------------------------------------
# 1. Hand-worked cases.
# Each: A runs, B runs, expected verdict per metric (absent: left out as missing), overall,
# dropped, dirty (None: key absent), extra checks on the metric objects.
R = make_run
HAND = [
    ("missing on one side", [R(prefill_tps=100, decode_tps=50), R(prefill_tps=101, decode_tps=51)],
     [R(decode_tps=50), R(decode_tps=51)], {"decode_tps": "same"}, "neutral", 0, None, {}),
    ("a null value does not count", [R(decode_tps=None), R(decode_tps=50)],
     [R(decode_tps=60), R(decode_tps=61)], {"decode_tps": "better"}, "improvement", 0, None,
     {"decode_tps": {"a_runs": [50], "a": 50.0, "b": 60.5, "ratio": 1.21}}),
    ("zero mean of A, no absolute floor", [R(decode_tps=0), R(decode_tps=0)],
     [R(decode_tps=1), R(decode_tps=2)], {"decode_tps": "better"}, "improvement", 0, None,
     {"decode_tps": {"ratio": None, "a": 0.0}}),
    ("zero mean of A under the absolute floor", [R(gpu_peak_mib=0), R(gpu_peak_mib=0)],
     [R(gpu_peak_mib=10), R(gpu_peak_mib=12)], {"gpu_peak_mib": "same"}, "neutral", 0, None,
     {"gpu_peak_mib": {"ratio": None}}),
    ("both zero", [R(decode_tps=0)], [R(decode_tps=0)], {"decode_tps": "same"}, "neutral", 0, None,
     {"decode_tps": {"ratio": None}}),
    ("mean of A zero with values", [R(decode_tps=-1), R(decode_tps=1)],
     [R(decode_tps=2), R(decode_tps=3)], {"decode_tps": "better"}, "improvement", 0, None,
     {"decode_tps": {"ratio": None}}),
    # load_s: relative 0.05 of 10.05 = 0.5025 beats the absolute 0.5
    ("relative floor above absolute, passed", [R(load_s=10.0), R(load_s=10.1)],
     [R(load_s=10.6), R(load_s=10.7)], {"load_s": "worse"}, "regression", 0, None, {}),
    ("relative floor above absolute, not passed", [R(load_s=10.0), R(load_s=10.1)],
     [R(load_s=10.5), R(load_s=10.54)], {"load_s": "same"}, "neutral", 0, None, {}),
    # load_s: relative 0.05 of 1.05 = 0.0525, the absolute 0.5 rules
    ("absolute floor above relative, not passed", [R(load_s=1.0), R(load_s=1.1)],
     [R(load_s=1.4), R(load_s=1.5)], {"load_s": "same"}, "neutral", 0, None, {}),
    ("absolute floor above relative, passed", [R(load_s=1.0), R(load_s=1.1)],
     [R(load_s=0.4), R(load_s=0.5)], {"load_s": "better"}, "improvement", 0, None, {}),
    ("host anon: 64 MiB absolute", [R(host_anon_peak_mib=1000), R(host_anon_peak_mib=1001)],
     [R(host_anon_peak_mib=1050), R(host_anon_peak_mib=1051)], {"host_anon_peak_mib": "same"},
     "neutral", 0, None, {}),
    ("host anon: past 64 MiB", [R(host_anon_peak_mib=1000), R(host_anon_peak_mib=1001)],
     [R(host_anon_peak_mib=1100), R(host_anon_peak_mib=1101)], {"host_anon_peak_mib": "worse"},
     "regression", 0, None, {}),
    # gpu: relative 0.002 of 10000.5 = 20.001 beats 16; 10 < 20.001, 30 > 20.001
    ("gpu: relative floor 20 MiB", [R(gpu_peak_mib=10000), R(gpu_peak_mib=10001)],
     [R(gpu_peak_mib=10010), R(gpu_peak_mib=10011)], {"gpu_peak_mib": "same"}, "neutral", 0, None, {}),
    ("gpu: past the relative floor", [R(gpu_peak_mib=10000), R(gpu_peak_mib=10001)],
     [R(gpu_peak_mib=10030), R(gpu_peak_mib=10031)], {"gpu_peak_mib": "worse"}, "regression", 0,
     None, {}),
    ("gpu max device: 16 MiB absolute", [R(gpu_peak_max_device_mib=1000), R(gpu_peak_max_device_mib=1001)],
     [R(gpu_peak_max_device_mib=1010), R(gpu_peak_max_device_mib=1011)],
     {"gpu_peak_max_device_mib": "same"}, "neutral", 0, None, {}),
    ("gpu max device: past 16 MiB", [R(gpu_peak_max_device_mib=1000), R(gpu_peak_max_device_mib=1001)],
     [R(gpu_peak_max_device_mib=980), R(gpu_peak_max_device_mib=981)],
     {"gpu_peak_max_device_mib": "better"}, "improvement", 0, None, {}),
    ("overlapping arms", [R(prefill_tps=100), R(prefill_tps=110)],
     [R(prefill_tps=105), R(prefill_tps=120)], {"prefill_tps": "same"}, "neutral", 0, None, {}),
    ("touching arms are not separated", [R(prefill_tps=100), R(prefill_tps=101)],
     [R(prefill_tps=101), R(prefill_tps=102)], {"prefill_tps": "same"}, "neutral", 0, None, {}),
    ("energy per token: 5% and 3%", [R(prefill_j_per_token=1.0, decode_j_per_token=1.0)] * 2,
     [R(prefill_j_per_token=0.96, decode_j_per_token=0.96)] * 2,
     {"prefill_j_per_token": "same", "decode_j_per_token": "better"}, "improvement", 0, None, {}),
    ("tradeoff", [R(decode_tps=100, gpu_peak_mib=1000), R(decode_tps=101, gpu_peak_mib=1001)],
     [R(decode_tps=110, gpu_peak_mib=2000), R(decode_tps=111, gpu_peak_mib=2001)],
     {"decode_tps": "better", "gpu_peak_mib": "worse"}, "tradeoff", 0, None, {}),
    ("dropped: failed, perturbed, no status",
     [R(decode_tps=100), R(decode_tps=101), R(status="failed", decode_tps=1),
      R(perturbed=True, decode_tps=1), R(status="timeout", decode_tps="not read")],
     [R(decode_tps=110), R(status=ABSENT, decode_tps=9999), R(perturbed=1, decode_tps=9999),
      R(perturbed=0, decode_tps=111), R(perturbed=None, decode_tps=112), R(perturbed="", decode_tps=113),
      R(perturbed="yes", decode_tps=1)],
     {"decode_tps": "better"}, "improvement", 6, None,
     {"decode_tps": {"a_runs": [100, 101], "b_runs": [110, 111, 112, 113]}}),
    ("dirty runs, usable only",
     [R(decode_tps=100, machine_before={"clean": False}), R(decode_tps=100, machine_before=None),
      R(decode_tps=100, machine_before={}), R(decode_tps=100, machine_before={"load": 3.0}),
      R(status="failed", machine_before={"clean": False}), R(status="failed", machine_before="?")],
     [R(decode_tps=100, machine_before={"clean": None}), R(decode_tps=100, machine_before={"clean": True}),
      R(decode_tps=100, machine_before={"clean": 0})],
     {"decode_tps": "same"}, "neutral", 2, 3, {}),
    ("all dropped", [R(status="failed")], [R(status="failed", decode_tps=3)], {}, "neutral", 2, None, {}),
]


# compare.py's metric table (written out here, not taken from compare.py): direction, relative, absolute.
FLOORS = {"prefill_tps": (+1, 0.003, 0.0), "decode_tps": (+1, 0.003, 0.0), "gpu_peak_mib": (-1, 0.002, 16.0),
          "gpu_peak_max_device_mib": (-1, 0.002, 16.0), "host_anon_peak_mib": (-1, 0.02, 64.0),
          "load_s": (-1, 0.05, 0.5), "prefill_j_per_token": (-1, 0.05, 0.0), "decode_j_per_token": (-1, 0.03, 0.0)}


def floor_table():
    """Each metric's effective floor, max(relative x |mean A|, absolute), at a mean where the
    relative one rules and one where the absolute one does: 1% past it moves the verdict, 1%
    short of it does not, and exactly on it does not (the rule is 'more than')."""
    for m, (direction, rel, absolute) in FLOORS.items():
        for a in (100000.0, 1.0):
            floor = max(rel * a, absolute)
            for scale, good in ((1.01, "better"), (-1.01, "worse"), (0.99, "same"), (-0.99, "same")):
                b = a + direction * scale * floor
                rc, out, err = ours([write_side([R(**{m: a}), R(**{m: a})])], [write_side([R(**{m: b})])])
                got = out and out["metrics"][m]["verdict"]
                check(got == good, f"floor of {m} at {a}: B {b} is {got}, want {good}")
    # Exactly on the floor (values whose difference is exact in binary): not past it.
    for m, a, b in (("load_s", 1.0, 1.5), ("load_s", 1.0, 0.5), ("host_anon_peak_mib", 5000, 5100),
                    ("gpu_peak_mib", 100, 116), ("gpu_peak_max_device_mib", 100, 84)):
        rc, out, err = ours([write_side([R(**{m: a})])], [write_side([R(**{m: b})])])
        got = out and out["metrics"][m]["verdict"]
        check(got == "same", f"{m}: {a} against {b} is on the floor, not past it (got {got})")


def hand_cases():
    floor_table()
    for name, a, b, expect, overall, dropped, dirty, extra in HAND:
        rc, out, err = ours([write_side(a)], [write_side(b)])
        if not check(rc == 0 and out is not None, f"{name}: exit 0 (got {rc}, {err.strip()!r})"):
            continue
        got = {m: v["verdict"] for m, v in out["metrics"].items()}
        check(got == expect, f"{name}: verdicts {got} != {expect}")
        check(list(got) == [m for m in KEYS if m in expect], f"{name}: metric order {list(got)}")
        check(out["verdict"] == overall, f"{name}: overall {out['verdict']} != {overall}")
        check(out["dropped_runs"] == dropped, f"{name}: dropped {out['dropped_runs']} != {dropped}")
        check(out.get("dirty_runs") == dirty, f"{name}: dirty {out.get('dirty_runs')} != {dirty}")
        keys = ["metrics", "dropped_runs"] + (["dirty_runs"] if dirty else []) + ["worse", "better", "verdict", "stats"]
        check(list(out) == keys, f"{name}: keys {list(out)}")
        check(out["worse"] == [m for m, v in expect.items() if v == "worse"], f"{name}: worse {out['worse']}")
        check(out["better"] == [m for m, v in expect.items() if v == "better"], f"{name}: better {out['better']}")
        for m, v in out["metrics"].items():
            check(list(v) == ["a", "b", "ratio", "verdict", "a_runs", "b_runs"], f"{name}: {m} keys {list(v)}")
        for m, fields in extra.items():
            for k, want in fields.items():
                check(out["metrics"][m][k] == want, f"{name}: {m}.{k} = {out['metrics'][m][k]!r}, want {want!r}")
    # The table: "None" for a missing ratio, thousands separators, the marks, dropped and dirty lines.
    a = write_side([R(decode_tps=0, gpu_peak_mib=1234567.5, machine_before={"clean": False}), R(status="failed")])
    b = write_side([R(decode_tps=2, gpu_peak_mib=2000000)])
    rc, out, err = ours([a], [b], as_json=False)
    table = out.split("\n| metric | p (permutation)")[0]
    want = ("| metric | A | B | ratio | |\n|---|---:|---:|---:|---|\n"
            "| decode_tps | 0.0 | 2.0 | None | better |\n"
            "| gpu_peak_mib | 1,234,567.5 | 2,000,000.0 | 1.62 | **worse** |\n"
            "\nVerdict: **tradeoff**\n1 failed or traced runs were left out.\n"
            "1 runs started on a machine that was not clean.\n")
    check(rc == 0 and table == want, f"markdown table:\n{out}\nwant:\n{want}")
    # Measured noise, by every form of noise file.
    a = write_side([R(decode_tps=100), R(decode_tps=100.5)])
    b = write_side([R(decode_tps=101.5), R(decode_tps=102)])
    forms = [
        ([], "better"),
        (["--noise", write_json({"decode_tps": 0.001})], "better"),  # below the fixed 0.003
        (["--noise", write_json({"decode_tps": 0.02})], "same"),  # floor 0.02 * 100.25 = 2.005 > 1.5
        (["--noise", write_json({"only": {"decode_tps": 0.02}})], "same"),
        (["--noise", write_json({"x": {"decode_tps": 0.02}, "y": {}}), "--case", "y"], "better"),
        (["--noise", write_json({"x": {"decode_tps": 0.02}, "y": {}}), "--case", "x"], "same"),
        (["--noise", write_json({"x": None}), "--case", "x"], "better"),
        (["--noise", write_json({"x": {"prefill_tps": 0.5}})], "better"),
    ]
    for opts, want in forms:
        rc, out, err = ours([a], [b], *opts)
        got = out and out["metrics"]["decode_tps"]["verdict"]
        check(rc == 0 and got == want, f"noise {opts}: {got} != {want} ({err.strip()})")
    # A raw run folder (no run.json) that cannot be summarized counts as a failed run.
    os.makedirs("raw")
    with open("raw/meta.json", "w") as f:
        f.write("{garbage")
    rc, out, err = ours(["raw", a], [b])
    check(rc == 0 and out and out["dropped_runs"] == 1, f"raw folder: dropped 1 (rc {rc}, {err!r})")
    check(len(err.splitlines()) == 1 and "raw" in err and "not summarized" in err,
          f"raw folder: one stderr line saying so ({err!r})")
    # A raw run folder that can be summarized is summarized (run.json written) and counts.
    os.makedirs("raw_ok")
    with open("raw_ok/meta.json", "w") as f:
        json.dump({"schema": "perfscope-meta/1", "status": "ok", "t0_ns": 1000}, f)
    with open("raw_ok/phases.jsonl", "w") as f:
        f.write('{"t_ns": 1000000000, "name": "decode", "event": "begin"}\n'
                '{"t_ns": 3000000000, "name": "decode", "event": "end", "tokens": 100}\n')
    rc, out, err = ours(["raw_ok"], [b])
    check(rc == 0 and out and out["dropped_runs"] == 0 and out["metrics"]["decode_tps"]["a_runs"] == [50],
          f"raw folder summarized on the fly: decode 100 tokens in 2 s counted ({rc}, {out}, {err!r})")
    check(os.path.isfile("raw_ok/run.json"), "raw folder: run.json written")
    # Arguments: a run.json file, single run folders, folders of runs, in version order.
    side = write_side([R(decode_tps=v) for v in range(1, 12)])
    rc, out, err = ours([side], [f"{side}/r03/run.json", f"{side}/r01"])
    check(rc == 0 and out["metrics"]["decode_tps"]["a_runs"] == list(range(1, 12)), "folder of runs in order")
    check(rc == 0 and out["metrics"]["decode_tps"]["b_runs"] == [4, 2], "file and folder arguments in order")


# ---------------------------------------------------------------------------------------------
# 2. Permutation p-values, bootstrap, the warning.
def brute_p(a, b):
    pooled = a + b
    obs = sum(b)
    ge = le = total = 0
    for idx in itertools.combinations(range(len(pooled)), len(b)):
        s = sum(pooled[i] for i in idx)
        total += 1
        ge += s >= obs - 1e-9 * sum(map(abs, pooled))
        le += s <= obs + 1e-9 * sum(map(abs, pooled))
    return min(1.0, 2 * min(ge, le) / total)


def stats_of(a, b, metric="prefill_tps"):
    rc, out, err = ours([write_side([R(**{metric: v}) for v in a])], [write_side([R(**{metric: v}) for v in b])])
    if not check(rc == 0 and out, f"stats {a} {b}: exit 0 ({err.strip()})"):
        return None, None
    return out["stats"]["metrics"][metric], out["stats"]["warnings"]


def stats_cases():
    hand = [  # (A, B, p, exact, splits): worked out by hand
        ([1, 2, 3], [4, 5, 6], 2 / 20, True, 20),  # the most extreme of 20 splits, both tails
        ([1, 2, 4], [3, 5, 6], 4 / 20, True, 20),  # sums of 3 of 1..6 that reach 14: {3,5,6}, {4,5,6}
        ([1, 2, 3, 4], [5, 6, 7, 8], 2 / 70, True, 70),
        ([1, 2], [3, 4], 2 / 6, True, 6),
        ([5, 5, 5], [5, 5, 5], 1.0, True, 20),
        ([1], [2], 1.0, True, 2),
        ([1, 2, 3], [10, 11], 2 / 10, True, 10),
    ]
    for a, b, p, exact, splits in hand:
        st, warnings = stats_of(a, b)
        if st:
            check(abs(st["p_value"] - p) < 1e-12, f"p {a} vs {b}: {st['p_value']} != {p}")
            check(st["p_method"] == ("exact" if exact else "monte-carlo"), f"p {a} vs {b}: method {st['p_method']}")
            check(st["splits"] == splits, f"p {a} vs {b}: splits {st['splits']} != {splits}")
    # Against a brute force on random small sets (ties included).
    rng = random.Random(7)
    for _ in range(12):
        a = [rng.choice([1, 2, 2.5, 3, 4, 7]) for _ in range(rng.randint(1, 5))]
        b = [rng.choice([1, 2, 3, 3.5, 6, 8]) for _ in range(rng.randint(1, 5))]
        st, _ = stats_of(a, b, "decode_tps")
        if st:
            check(abs(st["p_value"] - brute_p(a, b)) < 1e-12, f"p {a} vs {b}: {st['p_value']} != brute {brute_p(a, b)}")
    # Too many splits for enumeration: Monte Carlo, its count stated.
    st, warnings = stats_of(list(range(12)), list(range(100, 112)))
    if st:
        check(st["p_method"] == "monte-carlo" and st["splits"] == 100000, f"12 vs 12: {st}")
        check(abs(st["p_value"] - 2 / 100001) < 1e-12, f"12 vs 12: p {st['p_value']}")
        check(warnings == [], f"12 vs 12: no warning ({warnings})")
    # The warning: 3 against 3 can never reach 0.05; 4 against 4 can.
    st, warnings = stats_of([1, 2, 3], [4, 5, 6])
    if st:
        check(st["min_p"] == 0.1, f"3 vs 3: min_p {st['min_p']}")
        check(len(warnings) == 1 and "3 A against 3 B" in warnings[0] and "0.1" in warnings[0]
              and "prefill_tps" in warnings[0], f"3 vs 3 warning: {warnings}")
    st, warnings = stats_of([1, 2, 3, 4], [5, 6, 7, 8])
    check(st is not None and warnings == [], f"4 vs 4: no warning ({warnings})")
    a = write_side([R(decode_tps=v) for v in (1, 2, 3)])
    b = write_side([R(decode_tps=v) for v in (4, 5, 6)])
    rc, out, err = ours([a], [b], as_json=False)
    check(rc == 0 and "\nWarning: too few runs: 3 A against 3 B cannot reach p < 0.05" in out,
          f"3 vs 3: the warning line in the table output ({out!r})")
    # Bootstrap: deterministic, around the ratio; a constant side gives a point.
    a = write_side([R(decode_tps=v) for v in (100, 103, 98, 101)])
    b = write_side([R(decode_tps=v) for v in (110, 108, 113, 111)])
    first = ours([a], [b])[1]
    second = ours([a], [b])[1]
    ci = first and first["stats"]["metrics"]["decode_tps"]["ratio_ci95"]
    check(first and second and first["stats"] == second["stats"], "bootstrap is deterministic")
    check(ci and ci[0] <= first["metrics"]["decode_tps"]["ratio"] <= ci[1], f"interval {ci} holds the ratio")
    check(ci and first["stats"]["metrics"]["decode_tps"]["bootstrap_resamples"] == 10000, "10000 resamples")
    st, _ = stats_of([4, 4], [5, 5])
    check(st and st["ratio_ci95"] == [1.25, 1.25], f"constant sides: interval {st and st['ratio_ci95']}")
    st, _ = stats_of([0, 0], [5, 5])
    check(st and st["ratio_ci95"] is None, "A's mean 0: no interval")


# ---------------------------------------------------------------------------------------------
# 3. Hostile input.
def expect_refused(args, name, label):
    rc, out, err = run_tool(*args)
    lines = err.splitlines()
    check(rc == 2, f"{label}: exit 2 (got {rc}, stderr {err!r})")
    check(out == "", f"{label}: nothing on stdout (got {out[:200]!r})")
    check(len(lines) == 1, f"{label}: one stderr line (got {lines!r})")
    if name and lines:
        check(name in lines[0], f"{label}: stderr names {name} ({lines[0]!r})")


def hostile():
    good = write_side([R(decode_tps=1)])
    bad_contents = {
        "empty": b"",
        "blank": b"  \n\n",
        "truncated": b'{"status": "ok", "throughput": {"decode": {"tokens_per_s": 1',
        "garbage": b"\x7fELF\x00\x01\x02binary",
        "text": b"hello world",
        "trailing": b'{"status": "ok"} {"status": "ok"}',
        "list": b"[1, 2]",
        "number": b"5",
        "nan": b'{"status": "ok", "throughput": {"decode": {"tokens_per_s": NaN}}}',
        "string value": b'{"status": "ok", "throughput": {"decode": {"tokens_per_s": "fast"}}}',
        "bool value": b'{"status": "ok", "energy": {"decode_j_per_token": true}}',
        "machine_before string": b'{"status": "ok", "machine_before": "busy"}',
    }
    for label, content in bad_contents.items():
        d = f"bad_{label.replace(' ', '_')}"
        os.makedirs(d)
        with open(f"{d}/run.json", "wb") as f:
            f.write(content)
        expect_refused(["diff", d, "--", good], f"{d}/run.json", f"run.json {label}")
        expect_refused(["diff", good, "--", f"{d}/run.json"], f"{d}/run.json", f"run.json file {label}")
    os.makedirs("fifo")
    os.mkfifo("fifo/run.json")
    expect_refused(["diff", "fifo", "--", good], "fifo/run.json", "run.json a FIFO (no hang)")
    os.makedirs("nothing/sub")
    expect_refused(["diff", "nothing", "--", good], "nothing", "folder without runs")
    expect_refused(["diff", "no_such_dir", "--", good], "no_such_dir", "missing folder")
    os.makedirs("runjson_is_dir/run.json")
    expect_refused(["diff", "runjson_is_dir", "--", good], "runjson_is_dir/run.json", "run.json a folder")
    expect_refused(["diff", good], None, "no --")
    expect_refused(["diff", good, "--"], None, "no B side")
    expect_refused(["diff", "--bogus", good, "--", good], None, "unknown option")
    expect_refused(["diff", "--noise"], None, "--noise without a file")
    # Noise files given to diff.
    noise_bad = {
        "empty": b"", "truncated": b'{"case": {"decode_tps": 0.0', "garbage": b"\x00\x01\x02",
        "list": b"[0.1]", "null floor": b'{"decode_tps": null}', "string floor": b'{"c": {"decode_tps": "x"}}',
        "two cases": b'{"a": {}, "b": {}}', "case not object": b'{"a": [1]}',
    }
    for label, content in noise_bad.items():
        name = f"noise_{label.replace(' ', '_')}.json"
        with open(name, "wb") as f:
            f.write(content)
        expect_refused(["diff", "--noise", name, good, "--", good], name, f"noise file {label}")
    expect_refused(["diff", "--noise", "noise_missing.json", good, "--", good], "noise_missing.json", "noise file missing")
    name = write_json({"a": {}}, "noise_case.json")
    expect_refused(["diff", "--noise", name, "--case", "zz", good, "--", good], name, "noise --case absent")
    # Matrix files given to noise.
    matrix_bad = {
        "empty": b"", "truncated": b'{"cases": [{"label": "x", "metrics": {', "garbage": b"\xff\xfe\x00junk",
        "list": b"[]", "cases not list": b'{"cases": 5}', "no cases": b'{"a": "x"}',
        "case not object": b'{"cases": [3]}', "no label": b'{"cases": [{"metrics": {}}]}',
        "metrics null": b'{"cases": [{"label": "x", "metrics": null}]}',
        "no runs": b'{"cases": [{"label": "x", "metrics": {"decode_tps": {"a_runs": [], "b_runs": []}}}]}',
        "runs missing": b'{"cases": [{"label": "x", "metrics": {"decode_tps": {"a_runs": [1]}}}]}',
        "run string": b'{"cases": [{"label": "x", "metrics": {"decode_tps": {"a_runs": ["1"], "b_runs": [1]}}}]}',
    }
    for label, content in matrix_bad.items():
        name = f"matrix_{label.replace(' ', '_')}.json"
        with open(name, "wb") as f:
            f.write(content)
        expect_refused(["noise", name], name, f"matrix {label}")
    expect_refused(["noise", "matrix_missing.json"], "matrix_missing.json", "matrix missing")
    expect_refused(["noise"], None, "noise without a file")


# ---------------------------------------------------------------------------------------------
# 4. Exactness against compare.py itself.
def load_compare(path):
    """compare.py's source cut out of the reference text ('+' diff lines), run with a stub runner."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = lines.index("llmperfscope/compare.py")
    body = []
    for line in lines[start + 1:]:
        if line.startswith("@@") or (not body and not line.strip()):
            continue
        if not line.startswith("+"):
            break
        body.append(line[1:])
    package = types.ModuleType("llmperfscope")
    package.__path__ = []
    runner = types.ModuleType("llmperfscope.runner")
    package.runner = runner
    sys.modules["llmperfscope"] = package
    sys.modules["llmperfscope.runner"] = runner
    module = types.ModuleType("llmperfscope.compare")
    module.__package__ = "llmperfscope"
    exec(compile("\n".join(body) + "\n", "compare.py", "exec"), module.__dict__)
    for name in ("judge", "diff", "render_diff", "noise_from_null", "METRICS", "FLOORS"):
        if not hasattr(module, name):
            raise RuntimeError(f"compare.py from {path} has no {name}")
    return module


def same_shape(x, y, where):
    """Equal values and equal key order all the way down (1 == 1.0: JSON numbers)."""
    if isinstance(x, dict) and isinstance(y, dict):
        if list(x) != list(y):
            return f"{where}: keys {list(x)} != {list(y)}"
        for k in x:
            r = same_shape(x[k], y[k], f"{where}.{k}")
            if r:
                return r
        return None
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return f"{where}: {x} != {y}"
        for i, (p, q) in enumerate(zip(x, y)):
            r = same_shape(p, q, f"{where}[{i}]")
            if r:
                return r
        return None
    if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None or isinstance(x, str):
        return None if (x is y or (type(x) is type(y) and x == y)) else f"{where}: {x!r} != {y!r}"
    return None if x == y else f"{where}: {x!r} != {y!r}"


def random_value(rng, base, is_int):
    return int(round(base)) if is_int else base


def random_runs(rng, n, bases, factor, jitter, kinds, missing):
    runs = []
    for _ in range(n):
        roll = rng.random()
        status = "ok" if roll < 0.85 else rng.choice(["failed", "timeout", ABSENT, "killed"])
        perturbed = rng.choice([ABSENT] * 6 + [False, None, 0, True, 1])
        machine = rng.choice([ABSENT] * 4 + [None, {}, {"clean": True}, {"clean": False}, {"clean": None},
                                               {"load1": 2.5}, {"clean": 0}])
        metrics = {}
        for m in KEYS:
            if m in missing or rng.random() < 0.08:
                if rng.random() < 0.5:
                    metrics[m] = None
                continue
            v = bases[m] * factor[m] * (1 + rng.uniform(-jitter[m], jitter[m]))
            metrics[m] = random_value(rng, v, kinds[m])
        runs.append(make_run(status=status, perturbed=perturbed, machine_before=machine, **metrics))
    return runs


def random_case(rng):
    magnitudes = {"prefill_tps": (10, 50000), "decode_tps": (1, 500), "gpu_peak_mib": (0, 80000),
                  "gpu_peak_max_device_mib": (0, 80000), "host_anon_peak_mib": (0, 8000), "load_s": (0.01, 30),
                  "prefill_j_per_token": (1e-5, 2), "decode_j_per_token": (1e-4, 20)}
    bases, kinds, factor, jitter = {}, {}, {}, {}
    for m, (lo, hi) in magnitudes.items():
        bases[m] = rng.choice([0.0, lo, hi, rng.uniform(lo, hi), rng.uniform(lo, hi)])
        kinds[m] = rng.random() < 0.3
        factor[m] = rng.choice([1.0, 1.0005, 1.002, 1.004, 1.01, 1.05, 1.2, 0.999, 0.99, 0.9, 0.5])
        jitter[m] = rng.choice([0.0, 1e-4, 1e-3, 5e-3, 0.02, 0.1])
    missing = {m for m in KEYS if rng.random() < 0.1}
    one = {m: 1.0 for m in KEYS}
    a = random_runs(rng, rng.randint(1, 6), bases, one, jitter, kinds, missing)
    b = random_runs(rng, rng.randint(1, 6), bases, factor, jitter, kinds, missing if rng.random() < 0.5 else set())
    return a, b


def same_as_compare(compare, name, args_a, args_b, runs_a, runs_b, opts, noise):
    """None when ours gives what compare.py's diff and render_diff give; else what differs."""
    want = json.loads(json.dumps(compare.diff(runs_a, runs_b, noise)))
    rc, got, err = ours(args_a, args_b, *opts)
    if rc != 0 or got is None:
        return f"{name}: exit {rc} ({err.strip()})", want
    stats = got.pop("stats", None)
    problem = same_shape(want, got, name)
    if problem is None and (stats is None or list(stats["metrics"]) != list(got["metrics"])):
        problem = f"{name}: no stats for every judged metric"
    rc, table, err = ours(args_a, args_b, *opts, as_json=False)
    table = table.split("\n| metric | p (permutation)")[0]
    # A side with no usable run: a first line says there is no verdict (DESIGN 11), then
    # compare.py's table, byte for byte; only where compare.py judged no metric at all.
    if table.startswith("**No verdict**: "):
        said, _, table = table.partition("\n\n")
        if problem is None and want.get("metrics"):
            problem = f"{name}: 'no verdict' said where compare.py judged {list(want['metrics'])}: {said}"
    want_table = compare.render_diff(compare.diff(runs_a, runs_b, noise))
    if problem is None and table != want_table:
        problem = f"{name}: table\n{table}\n!=\n{want_table}"
    return problem, want


# Numbers whose printing is the hard part: scientific forms, separators, signs, rounding to 0.
SPECIAL = [
    ([1e17, 1e17], [2e17, 2.5e17]), ([12345678901234.56789], [12345678901234.56788]),
    ([-1234.5, -1000], [-5.5, 3]), ([0.00004, 0.00001], [0.00006, 0.00009]),
    ([1e-7], [3e-7]), ([0.03125], [0.03135]), ([123456789.00005], [1.5e16, 9.99e15]),
    ([1e300], [1e301]), ([2.5e-300, 1], [1e300]), ([999.99995], [1000.00005]),
]


def exactness(path):
    compare = load_compare(path)
    rng = random.Random(20240601)
    agree = 0
    results = []
    jobs = []
    for i in range(RANDOM_CASES):
        a, b = random_case(rng)
        side_a, side_b = write_side(a, f"x{i}a"), write_side(b, f"x{i}b")
        args_a, args_b, runs_a, runs_b = [side_a], [side_b], a, b
        if rng.random() < 0.3:  # single run folders, in a shuffled order
            order = list(range(len(b)))
            rng.shuffle(order)
            args_b = [f"{side_b}/r{j:02d}" for j in order]
            runs_b = [b[j] for j in order]
        opts, noise = [], None
        roll = rng.random()
        if roll < 0.4:
            floors = {m: rng.choice([0.0, 0.001, 0.004, 0.01, 0.03, 0.1]) for m in KEYS if rng.random() < 0.6}
            if roll < 0.15:
                opts, noise = ["--noise", write_json(floors, f"x{i}n.json")], floors
            else:
                doc = {"other": {m: 0.5 for m in KEYS}, "this case": floors, "empty": {}}
                label = rng.choice(["this case", "empty", "other"])
                opts, noise = ["--noise", write_json(doc, f"x{i}n.json"), "--case", label], doc.get(label)
        jobs.append((compare, f"random case {i}", args_a, args_b, runs_a, runs_b, opts, noise))
    # The tool runs are independent: a few at a time (each is mostly process start-up).
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        outcomes = list(pool.map(lambda job: same_as_compare(*job), jobs))
    for problem, want in outcomes:
        if check(problem is None, problem or ""):
            agree += 1
        if want:
            results.append(want)
    for i, (a_values, b_values) in enumerate(SPECIAL):
        for m in ("decode_tps", "gpu_peak_mib"):
            a = [R(**{m: v}) for v in a_values]
            b = [R(**{m: v}) for v in b_values]
            problem, _ = same_as_compare(compare, f"special case {i} {m}", [write_side(a)], [write_side(b)], a, b, [], None)
            check(problem is None, problem or "")
    verdicts = {}
    for r in results:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    print(f"# diff: {agree} of {RANDOM_CASES} random cases agree with compare.py (overall verdicts {verdicts})")
    # noise_from_null on matrices of those results (a skipped case, repeated labels).
    agree_noise = 0
    for i in range(40):
        cases = []
        for _ in range(rng.randint(1, 6)):
            r = dict(rng.choice(results))
            r["label"] = rng.choice(["llama 7b", "llama 70b", "tg128", "pp512", "ü"])
            cases.append(r)
        if rng.random() < 0.3:
            cases.insert(rng.randint(0, len(cases)), {"label": "gone", "skipped": "model missing"})
        matrix = write_json({"a": "old", "b": "old", "order": "ABBA", "cases": cases}, f"m{i}.json")
        want = compare.noise_from_null(matrix)
        rc, out, err = run_tool("noise", matrix)
        try:
            got = json.loads(out) if rc == 0 else None
        except ValueError:
            got = None
        problem = same_shape(want, got, f"noise matrix {i}") if got is not None else f"noise {i}: rc {rc} {err}"
        if check(problem is None, problem or ""):
            agree_noise += 1
    print(f"# noise: {agree_noise} of 40 random matrices agree with compare.py's noise_from_null")


def main():
    hand_cases()
    stats_cases()
    hostile()
    if REFERENCE and os.path.isfile(REFERENCE):
        exactness(REFERENCE)
    else:
        print(f"# exactness against compare.py skipped: {REFERENCE or 'no reference path'} is absent")
    finish()


if __name__ == "__main__":
    main()
