"""diff_warn_check.py TOOL: the warnings `perfscope-report diff` gives beside compare.py's
verdict (tests/t_tools_diff_warn.sh; report/ab/warn.c), each where it is due and absent where it
is not: too few runs (naming the metric and the runs needed), no usable run on a side (the table
says why and exits 2; --json keeps compare.py's object, says it on stderr, exits 0), runs with
no throughput, a --noise floor naming no metric; and llama-bench's markdown table read as
throughput from a raw run folder's target.stdout (python3, standard library; tests/checks.py).
"""
import json
import os
import subprocess
import sys

from checks import check, finish

TOOL = sys.argv[1]
COMPARE_KEYS = ["metrics", "dropped_runs", "worse", "better", "verdict"]


def side(name, runs):
    for i, r in enumerate(runs):
        os.makedirs("%s/r%d" % (name, i), exist_ok=True)
        with open("%s/r%d/run.json" % (name, i), "w") as f:
            json.dump(r, f)
    return name


def run(*args):
    p = subprocess.run([TOOL, "diff", *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def ok(decode=None, anon=None, perturbed=False, status="ok"):
    r = {"status": status, "perturbed": perturbed}
    if decode is not None:
        r["throughput"] = {"decode": {"tokens_per_s": decode}}
    if anon is not None:
        r["memory"] = {"host": {"anon_peak_mib": anon}}
    return r


def few_runs():
    a2, b2 = side("a2", [ok(100), ok(101)]), side("b2", [ok(110), ok(111)])
    rc, out, err = run(a2, "--", b2)
    want = ("Warning: too few runs: 2 A against 2 B cannot reach p < 0.05 (the smallest possible p is "
            "0.3333): decode_tps; at least 4 runs a side are needed.")
    check(rc == 0 and want in out, "2 vs 2: the warning in the table (%r)" % out[-400:])
    check("warning: too few runs: 2 A against 2 B" in err, "2 vs 2: on stderr (%r)" % err)
    a4, b4 = side("a4", [ok(100 + i) for i in range(4)]), side("b4", [ok(110 + i) for i in range(4)])
    rc, out, err = run(a4, "--", b4)
    check(rc == 0 and "Warning" not in out and err == "", "4 vs 4: no warning (%r %r)" % (out[-300:], err))
    rc, out, err = run("--json", a2, "--", b2)
    doc = json.loads(out)
    check(rc == 0 and err == "" and any("at least 4 runs a side" in w for w in doc["stats"]["warnings"]),
          "--json: the warning in stats.warnings, nothing on stderr (%r)" % err)


def all_dropped():
    pa = side("pa", [ok(100, perturbed=True), ok(101, perturbed=True)])
    pb = side("pb", [ok(100, perturbed=True), ok(100, status="timeout")])
    rc, out, err = run(pa, "--", pb)
    # The first line says there is no verdict, before compare.py's table (kept byte for byte) reads
    # "Verdict: **neutral**" over no rows.
    first, _, rest = out.partition("\n\n")
    table = rest.split("\n| metric | p (permutation)")[0]
    check(first.startswith("**No verdict**: no usable run on side A and B, so nothing was judged") and
          table == "| metric | A | B | ratio | |\n|---|---:|---:|---:|---|\n\nVerdict: **neutral**\n"
                   "4 failed or traced runs were left out.\n",
          "all dropped: no verdict said first, compare.py's table kept (%r)" % out[:600])
    check(rc == 2, "all dropped: the table exits 2 (%d)" % rc)
    check("Warning: no verdict: no usable run on side A and B" in out and "2 sampled (perturbed)" in out and
          "1 with status \"timeout\"" in out and "diff --profiles" in out, "all dropped: why, in the table (%r)" % out)
    check(len(err.splitlines()) == 1 and "no verdict" in err, "all dropped: one stderr line (%r)" % err)
    rc, out, err = run("--json", pa, "--", pb)
    doc = json.loads(out) if rc == 0 else {}
    check(rc == 0 and [k for k in doc if k != "stats"] == COMPARE_KEYS and doc["verdict"] == "neutral" and
          doc["dropped_runs"] == 4, "all dropped --json: compare.py's object, exit 0 (%d %s)" % (rc, list(doc)))
    check(len(err.splitlines()) == 1 and "no verdict" in err, "all dropped --json: said on stderr (%r)" % err)
    one = side("one", [ok(100)])
    rc, out, err = run(one, "--", pb)
    check(rc == 2 and "no usable run on side B" in out, "B side dropped: no verdict (%d)" % rc)
    rc, out, err = run(one, "--", side("one2", [ok(100)]))
    check("no verdict" not in out + err, "usable runs on both sides: no such warning")


def no_throughput():
    ma, mb = side("ma", [ok(anon=100)] * 4), side("mb", [ok(anon=100)] * 4)
    rc, out, err = run(ma, "--", mb)
    check(rc == 0 and out.count("Warning: no throughput:") == 2 and "4 of 4 usable A runs" in out and
          "markdown table or -o json" in out, "no throughput: said per side (%r)" % out[-600:])
    mixed = side("mixed", [ok(anon=100), ok(100, anon=100), ok(101, anon=100), ok(102, anon=100)])
    rc, out, err = run(mixed, "--", mb)
    check("1 of 4 usable A runs" in out, "no throughput: one run of four named (%r)" % out[-600:])
    rc, out, err = run(side("ta", [ok(100 + i) for i in range(4)]), "--", side("tb", [ok(100 + i) for i in range(4)]))
    check("no throughput" not in out + err, "throughput there: no warning")


def noise_keys():
    a4, b4 = "a4", "b4"
    with open("typo.json", "w") as f:
        json.dump({"decode_tsp": 0.1, "decode_tps": 0.001}, f)
    rc, out, err = run("--noise", "typo.json", a4, "--", b4)
    check(rc == 0 and "\"decode_tsp\" is no metric" in out and "decode_tsp" in err, "noise typo said (%r)" % out[-300:])
    with open("good.json", "w") as f:
        json.dump({"case": {"decode_tps": 0.001}}, f)
    rc, out, err = run("--noise", "good.json", "--case", "case", a4, "--", b4)
    check(rc == 0 and "is no metric" not in out and err == "", "good noise file: no warning (%r)" % err)


def llama_markdown():
    for name, tg in (("lma", 50.0), ("lmb", 55.0)):
        d = name + "/r0"
        os.makedirs(d)
        with open(d + "/meta.json", "w") as f:
            json.dump({"schema": "perfscope-meta/1", "status": "ok", "t0_ns": 1000}, f)
        with open(d + "/target.stdout", "w") as f:
            f.write("| model | size | params | backend | threads | test | t/s |\n"
                    "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
                    "| llama 1B Q4_0 | 606.53 MiB | 1.10 B | CPU | 2 | pp512 | 1000.00 \u00b1 2.00 |\n"
                    "| llama 1B Q4_0 | 606.53 MiB | 1.10 B | CPU | 2 | tg128 | %.2f \u00b1 0.50 |\n"
                    "| llama 1B Q4_0 | 606.53 MiB | 1.10 B | CPU | 2 | pp512+tg128 | 77.00 \u00b1 0.50 |\n"
                    "\nbuild: 1234abcd (4321)\n" % tg)
    rc, out, err = run("--json", "lma", "--", "lmb")
    doc = json.loads(out) if rc == 0 else {"metrics": {}}
    m = doc["metrics"]
    check(m.get("decode_tps", {}).get("a_runs") == [50] and m.get("decode_tps", {}).get("b_runs") == [55] and
          m.get("prefill_tps", {}).get("a_runs") == [1000], "llama-bench markdown read: %s (%s)" % (m, err))
    check(not any("no throughput" in w for w in doc.get("stats", {}).get("warnings", [])),
          "llama-bench markdown: no no-throughput warning")


if __name__ == "__main__":
    few_runs()
    all_dropped()
    no_throughput()
    noise_keys()
    llama_markdown()
    finish()
