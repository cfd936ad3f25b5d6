"""report_matrix.py: `perfscope-report matrix` on two scripted builds, run by
tests/t_tools_report_matrix.sh from a scratch folder with $TOOLS/perfscope-report (the sanitizer
build under make test-asan; the engines run under $SHIM, the normal build) (python3, standard
library only; checks as tests/checks.py: one FAIL line per failed check, the count at the end).

Build A's engine spends 150 ms on 300 prefill tokens and 200 ms on 100 decode tokens; build B's
is slower at prefill (187.5 ms) and faster at decode (160 ms). The markers carry t= values set
from those durations, so the throughput is exact and the same in every run: the verdicts are
certain. With --llama-bench the engines print llama-bench JSON instead of markers. Checked: a
tradeoff with prefill worse and decode better; llama-bench output giving an improvement; a
failing arm and a timed-out arm recorded while the matrix goes on; a missing model skipped; one
build against itself neutral; table.md as compare.py's write_table writes it (rebuilt here from
matrix.json); matrix.json after every case; --noise floors; SIGINT keeping the finished cases and killing
the running arm; --precheck skip refusing arms only on a busy machine.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

from checks import check, finish, require

TOOL = sys.argv[1]
SHIM = os.environ["SHIM"]
W = os.getcwd()
PY = os.path.realpath(sys.executable)

ENGINE = r'''#!%(py)s
import json, os, sys, time
SPEED = %(speed)r
BUILD = %(build)r
args = sys.argv[1:]
OUT = os.environ["PERFSCOPE_OUT"]
with open(os.path.join(OUT, "engine.pid"), "w") as f:
    f.write(str(os.getpid()))
with open(os.path.join(OUT, "engine.seen"), "w") as f:
    json.dump({"argv": args, "env": {k: v for k, v in os.environ.items() if k.startswith("ENGINE_")}}, f)
PROFILED = os.path.basename(OUT).startswith("profile_")
if os.environ.get("PERFSCOPE_HZ") != ("997" if PROFILED else "0") or "libperfscope" not in os.environ.get("LD_PRELOAD", ""):
    sys.exit(9)
if "--crash-all" in args:
    sys.exit(4)
if "--silent" in args:
    sys.exit(0)
if "ENGINE_DECODE_S" in os.environ:
    SPEED = dict(SPEED, decode=float(os.environ["ENGINE_DECODE_S"]))
if "-m" in args and not os.path.exists(args[args.index("-m") + 1]):
    sys.exit(5)
if "--crash-b" in args and BUILD == "B":
    print("crashing on purpose", file=sys.stderr)
    sys.exit(3)
if "--hang-b" in args and BUILD == "B":
    time.sleep(60)
if "--slow" in args:
    time.sleep(30)
if "--llama-bench" in args:
    pp = 1000.0 if BUILD == "A" else 1100.0
    print(json.dumps([
        {"n_prompt": 512, "n_gen": 0, "avg_ts": pp, "stddev_ts": 1.5, "samples_ts": [pp, pp]},
        {"n_prompt": 0, "n_gen": 128, "avg_ts": 50.0, "stddev_ts": 0.1, "samples_ts": [50.0, 50.0]}], indent=2))
    sys.exit(0)
if "--llama-bench-md" in args:  # llama-bench without -o: its markdown table
    pp = 1000.0 if BUILD == "A" else 1100.0
    print("| model                          |       size |     params | backend    | threads |            test |                  t/s |")
    print("| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |")
    print("| llama 1B Q4_0                  | 606.53 MiB |     1.10 B | CPU        |       2 |           pp512 | %%12.2f \u00b1 1.50 |" %% pp)
    print("| llama 1B Q4_0                  | 606.53 MiB |     1.10 B | CPU        |       2 |           tg128 |         50.00 \u00b1 0.10 |")
    print("")
    print("build: 1234abcd (4321)")
    sys.exit(0)
m = os.environ["LLMPERFSCOPE_MARKERS"]
def mark(line):
    with open(m, "a") as f:
        f.write(line + "\n")
t = time.monotonic_ns()
for name, toks in (("prefill", 300), ("decode", 100)):
    if PROFILED:  # CPU for the sampler to see; the t= values keep the throughput exact
        until = time.process_time() + 0.05
        while time.process_time() < until:
            pass
    mark("%%s begin t=%%d" %% (name, t))
    if not os.environ.get("MATRIX_TEST_NO_SLEEP"):  # the t= values alone set the throughput
        time.sleep(SPEED[name])
    t += int(SPEED[name] * 1e9)
    mark("%%s end t=%%d tokens=%%d" %% (name, t, toks))
'''


def build(name, speed):
    os.makedirs(name, exist_ok=True)
    path = os.path.join(name, "engine")
    with open(path, "w") as f:
        f.write(ENGINE % {"py": PY, "speed": speed, "build": name})
    os.chmod(path, 0o755)


def matrix(cases, *opts, out="out"):
    with open("cases.json", "w") as f:
        json.dump(cases, f)
    p = subprocess.run([TOOL, "matrix", "cases.json", *opts, "--out", out], capture_output=True,
                       text=True, timeout=300)
    return p


def load(out):
    with open(os.path.join(out, "matrix.json")) as f:
        return json.load(f)


def table_md(table):
    """compare.py's write_table, written again here from its description."""
    cols = [("prefill_tps", "pp"), ("decode_tps", "tg"), ("gpu_peak_mib", "GPU mem"),
            ("host_anon_peak_mib", "host anon"), ("load_s", "load"), ("decode_j_per_token", "tg J/tok")]
    # Beyond write_table: above it, a line per case with no verdict (a side with no usable run).
    pre = ["**No verdict** for %s: %s. Its verdict in the table is compare.py's word, which stays."
           % (c["label"], w[len("no verdict: "):]) for c in table["cases"]
           for w in c.get("warnings", []) if w.startswith("no verdict: ")]
    out = (pre + [""] if pre else []) + ["| case | " + " | ".join("%s %s/%s" % (t, table["b"], table["a"]) for _, t in cols) + " | verdict |",
           "|---|" + "---:|" * len(cols) + "---|"]
    for c in table["cases"]:
        if "skipped" in c:
            out.append("| %s | %s |" % (c["label"], c["skipped"]))
            continue
        cells = []
        for m, _ in cols:
            v = c["metrics"].get(m)
            if not v:
                cells.append("-")
                continue
            cell = "%.3f" % v["ratio"] if v["ratio"] is not None else "-"
            cells.append({"worse": "**%s** worse" % cell, "better": cell + " better"}.get(v["verdict"], cell))
        extra = " (%d arms failed)" % c["dropped_runs"] if c["dropped_runs"] else ""
        if c.get("worse"):
            extra += ": costs " + ", ".join(c["worse"])
        out.append("| %s | %s | %s%s |" % (c["label"], " | ".join(cells), c["verdict"], extra))
    # Beyond write_table: the matrix's warnings, then each case's, under the table.
    warns = ["Warning: %s." % w for w in table.get("warnings", [])]
    warns += ["Warning: %s: %s." % (c["label"], w) for c in table["cases"] for w in c.get("warnings", [])]
    return "\n".join(out) + "\n" + ("\n" + "\n".join(warns) + "\n" if warns else "")


def arms(case, side=None):
    return [a for a in case["arms"] if side is None or a["side"] == side]


def test_ab():
    open("present.gguf", "w").close()
    cases = {"defaults": {"binary": "engine", "env": {"ENGINE_DEFAULT": "1"}},
             "cases": [{"label": "mixed", "model": "present.gguf"},
                       {"label": "llama bench", "args": ["--llama-bench"]},
                       {"label": "crash", "args": ["--crash-b"]},
                       {"label": "hang", "args": ["--hang-b"]},
                       {"label": "no model", "model": "missing.gguf"}]}
    t0 = time.monotonic()
    # --order ABBA: the order once (the default repeats it until 5 runs a side: test_default_order)
    p = matrix(cases, "--a", "A=A", "--b", "B=B", "--precheck", "off", "--timeout", "3", "--order", "ABBA")
    require(p.returncode == 0, "matrix exit %d: %s" % (p.returncode, p.stderr))
    print("# matrix A/B: %.1f s" % (time.monotonic() - t0))
    t = load("out")
    check(t["a"] == "A" and t["b"] == "B" and t["order"] == "ABBA", "header %s" % {k: t[k] for k in "a b order".split()})
    by = {c["label"]: c for c in t["cases"]}
    require(list(by) == ["mixed", "llama bench", "crash", "hang", "no model"], "cases %s" % list(by))
    mixed = by["mixed"]
    check(mixed["verdict"] == "tradeoff" and mixed["worse"] == ["prefill_tps"] and mixed["better"] == ["decode_tps"],
          "mixed: %s worse %s better %s" % (mixed["verdict"], mixed["worse"], mixed["better"]))
    check(mixed["metrics"]["prefill_tps"]["ratio"] == 0.8 and mixed["metrics"]["decode_tps"]["ratio"] == 1.25,
          "mixed ratios %s %s" % (mixed["metrics"]["prefill_tps"], mixed["metrics"]["decode_tps"]))
    check(mixed["metrics"]["decode_tps"]["a_runs"] == [500, 500] and mixed["metrics"]["decode_tps"]["b_runs"] == [625, 625],
          "decode runs %s" % mixed["metrics"]["decode_tps"])
    check([a["side"] for a in mixed["arms"]] == list("ABBA") and all(a["status"] == "ok" for a in mixed["arms"]),
          "mixed arms %s" % [(a["side"], a.get("status")) for a in mixed["arms"]])
    for a in mixed["arms"]:
        with open(os.path.join(a["dir"], "run.json")) as f:
            run = json.load(f)
        check(run["perturbed"] is False and run["status"] == "ok" and "machine_before" in run["runner"]
              and run["runner"]["command"][-2:] == ["-m", "present.gguf"],
              "arm run.json: perturbed %s, status %s, runner %s" % (run["perturbed"], run["status"], run.get("runner")))
        check(re.match(r".*/out/mixed/\d_[AB]_[AB]$", a["dir"]) is not None, "arm folder %s" % a["dir"])
    lb = by["llama bench"]
    check(lb["verdict"] == "improvement" and lb["better"] == ["prefill_tps"] and
          lb["metrics"]["prefill_tps"]["ratio"] == 1.1 and lb["metrics"]["decode_tps"]["verdict"] == "same",
          "llama-bench: %s" % json.dumps(lb["metrics"]))
    check(os.path.isdir("out/llama_bench"), "label 'llama bench' tagged llama_bench")
    crash = by["crash"]
    check(crash["dropped_runs"] == 2 and crash["verdict"] == "neutral" and
          [a["status"] for a in arms(crash, "B")] == ["exit 3", "exit 3"] and
          all(a["status"] == "ok" for a in arms(crash, "A")), "crash: %s" % json.dumps(crash["arms"]))
    with open(os.path.join(arms(crash, "B")[0]["dir"], "target.stderr")) as f:
        check("crashing on purpose" in f.read(), "the arm's stderr is kept")
    hang = by["hang"]
    check(all(a["status"] == "timeout" and a.get("timed_out") for a in arms(hang, "B")) and
          all(a["wall_s"] < 10 for a in arms(hang, "B")) and hang["dropped_runs"] == 2,
          "hang: %s" % json.dumps(hang["arms"]))
    for a in arms(hang, "B"):
        with open(os.path.join(a["dir"], "engine.pid")) as f:
            pid = int(f.read())
        check(not os.path.exists("/proc/%d" % pid), "timed-out arm %d killed" % pid)
    check(by["no model"] == {"label": "no model", "skipped": "model missing", "model": "missing.gguf"},
          "missing model: %s" % by["no model"])
    with open("out/table.md") as f:
        md = f.read()
    check(md == table_md(t), "table.md as write_table:\n%s\nwant:\n%s" % (md, table_md(t)))
    check("| mixed | **0.800** worse | 1.250 better |" in md and "tradeoff: costs prefill_tps" in md,
          "table.md mixed line:\n%s" % md)
    check("| crash |" in md and "neutral (2 arms failed)" in md, "table.md crash line")
    check(md.startswith("**No verdict** for crash: no usable run on side B") and
          md.count("**No verdict**") == 2 and "**No verdict** for hang: " in md,
          "table.md says first that crash and hang have no verdict:\n%s" % md)
    check(not [f for f in os.listdir("out") if ".tmp." in f], "no temporary files left")


def test_self():
    p = matrix({"cases": [{"label": "mixed", "binary": "engine"},
                          {"label": "llama", "binary": "engine", "args": ["--llama-bench"]},
                          {"label": "other", "binary": "engine"}]},
               "--a", "A=A", "--b", "A2=A", "--precheck", "off", "--order", "ABAB",
               "--only", "^(mixed|llama)$", out="self")
    require(p.returncode == 0, "self matrix exit %d: %s" % (p.returncode, p.stderr))
    t = load("self")
    check([c["label"] for c in t["cases"]] == ["mixed", "llama"], "--only: %s" % [c["label"] for c in t["cases"]])
    for c in t["cases"]:
        check(c["verdict"] == "neutral" and c["dropped_runs"] == 0 and
              c["metrics"]["decode_tps"]["ratio"] == 1.0 and c["metrics"]["prefill_tps"]["verdict"] == "same",
              "A against A: %s %s" % (c["verdict"], json.dumps(c["metrics"])))
        check([a["side"] for a in c["arms"]] == list("ABAB"), "order ABAB")


def test_noise():
    """A measured noise floor wider than the difference turns better/worse into same."""
    with open("noise.json", "w") as f:
        json.dump({"mixed": {"decode_tps": 0.3, "prefill_tps": 0.3}}, f)
    p = matrix({"cases": [{"label": "mixed", "binary": "engine"}]}, "--a", "A=A", "--b", "B=B",
               "--precheck", "off", "--order", "AB", "--noise", "noise.json", out="noisy")
    require(p.returncode == 0, "noise matrix exit %d: %s" % (p.returncode, p.stderr))
    c = load("noisy")["cases"][0]
    check(c["verdict"] == "neutral" and c["metrics"]["decode_tps"]["verdict"] == "same" and
          c["metrics"]["decode_tps"]["ratio"] == 1.25, "with a 30%% floor: %s" % json.dumps(c["metrics"]))


def test_interrupt():
    with open("cases.json", "w") as f:
        json.dump({"defaults": {"binary": "engine"},
                   "cases": [{"label": "first"}, {"label": "slow", "args": ["--slow"]}]}, f)
    p = subprocess.Popen([TOOL, "matrix", "cases.json", "--a", "A=A", "--b", "B=B", "--precheck", "off",
                          "--out", "int"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pidfile = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        d = "int/slow/0_A_A/engine.pid"
        if os.path.exists(d) and os.path.getsize(d):
            pidfile = d
            break
        time.sleep(0.05)
    require(pidfile is not None, "the slow case started")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    check(p.returncode == 130, "interrupted matrix exits 130: %d %s" % (p.returncode, err))
    check("interrupted" in err and len(err.splitlines()) == 1, "one line says so: %r" % err)
    t = load("int")
    check([c["label"] for c in t["cases"]] == ["first"] and t["cases"][0]["verdict"] == "tradeoff",
          "finished case kept: %s" % [c["label"] for c in t["cases"]])
    with open(pidfile) as f:
        pid = int(f.read())
    check(not os.path.exists("/proc/%d" % pid), "the running arm was stopped")
    check(not [f for f in os.listdir("int") if ".tmp." in f], "no temporary files left")


def test_precheck_skip():
    p = matrix({"cases": [{"label": "mixed", "binary": "engine"}]}, "--a", "A=A", "--b", "B=B",
               "--precheck", "skip", "--order", "AB", out="skip")
    c = load("skip")["cases"][0]
    # A refused arm is no run: with one arm a side, a refusal leaves a side without one, and a
    # matrix where no case has a verdict exits 2 (DESIGN 11).
    refused = sum("refused" in a for a in c["arms"])
    require(p.returncode == (2 if refused else 0), "skip matrix exit %d with %d refused: %s" % (p.returncode, refused, p.stderr))
    check(not refused or (re.search(r"no verdict: .*\((A: no run;|.*B: no run\))", p.stderr) and
                          re.search(r"no run on side [AB]: its 1 arm was refused \(--precheck skip", p.stderr)),
          "a side without runs said so: %s" % p.stderr)
    for a in c["arms"]:
        clean = a["machine_before"]["clean"]
        check(("refused" in a) == (not clean) and ("refused" not in a or "machine busy" in a["refused"]),
              "arm refused exactly when the machine was busy: %s" % a)
    print("# precheck skip: %d of 2 arms refused" % sum("refused" in a for a in c["arms"]))


if __name__ == "__main__":
    build("A", {"prefill": 0.15, "decode": 0.20})
    build("B", {"prefill": 0.1875, "decode": 0.16})
    for t in (test_ab, test_self, test_noise, test_interrupt, test_precheck_skip):
        t()
    finish()
