"""report_badinput.py: every reader perfscope-report OUT and matrix add (counters.jsonl and the
boundaries' counters, profile.json, the cases file, the matrix options, a target's llama-bench
output) on truncated, empty, garbage and hostile input: exit 2 with one line on stderr naming
the file and what is wrong, nothing on stdout, no output file left behind; or, where the input is
optional and not perfscope's own (a target's stdout), exit 0 without using it. Run by
tests/t_tools_report_badinput.sh with $TOOLS/perfscope-report (the sanitizer build under
make test-asan). Checks as tests/checks.py: one FAIL line per failed check, the count at the end,
exit 1 when any failed."""
import json
import os
import random
import re
import shutil
import subprocess
import sys

from checks import check, finish
from samples import write_samples

TOOL = sys.argv[1]


def run(*args, env=None):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, errors="replace", timeout=60,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def refused(args, name, why, label, env=None):
    rc, out, err = run(*args, env=env)
    lines = err.splitlines()
    ok = check(rc == 2, "%s: exit 2 (got %d, stderr %r)" % (label, rc, err[-300:]))
    ok &= check(out == "", "%s: nothing on stdout (%r)" % (label, out[:200]))
    ok &= check(len(lines) == 1, "%s: one stderr line (%r)" % (label, lines[:5]))
    if lines:
        ok &= check(name in lines[0], "%s: names %s (%r)" % (label, name, lines[0]))
        ok &= check(re.search(why, lines[0]) is not None, "%s: says /%s/ (%r)" % (label, why, lines[0]))
    return ok


def accepted(args, label):
    rc, out, err = run(*args)
    check(rc == 0, "%s: exit 0 (got %d: %r)" % (label, rc, err[-300:]))
    return out


GOOD_COUNTERS = [
    {"t_ns": 1000000000 + i * 100000000,
     "rapl": [{"zone": "intel-rapl:0", "name": "package-0", "energy_uj": 1000000 * i, "max_energy_range_uj": 262143328850}],
     "gpus": [{"index": 0, "energy_mj": 5000 + 30 * i, "mem_used_mib": 1024, "run_mem_mib": 512, "procs_listed": True}],
     "rss_anon_kib": 2048 + i}
    for i in range(20)]


def phase_line(t, name, event, tokens=None, counters=None):
    o = {"t_ns": t, "name": name, "event": event, "attrs": {}, "source": "file"}
    if tokens is not None:
        o["tokens"] = tokens
    if counters is not None:
        o["counters"] = counters
    return json.dumps(o)


def make_run(d, counters=GOOD_COUNTERS, samples=False):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"schema": "perfscope-meta/1", "status": "ok", "config": {"hz": 199 if samples else 0}}, f)
    with open(os.path.join(d, "phases.jsonl"), "w") as f:
        f.write(phase_line(1200000000, "prefill", "begin", counters=counters[2] if counters else None) + "\n")
        f.write(phase_line(2200000000, "prefill", "end", 100, counters=counters[12] if counters else None) + "\n")
    if counters is not None:
        with open(os.path.join(d, "counters.jsonl"), "w") as f:
            for c in counters:
                f.write(json.dumps(c) + "\n")
    if samples:
        write_samples(os.path.join(d, "cpuprof.7.bin"), [(1500000000, 7, "main", [0x401000])],
                      max_frames=4, dropped=0, hz=199)
        with open(os.path.join(d, "cpuprof.7.maps"), "w") as f:
            f.write("00400000-00500000 r-xp 00000000 fd:01 11 /nonexistent/engine\n")


def no_outputs(d, label):
    left = [f for f in os.listdir(d) if f in ("run.json", "report.md") or ".tmp." in f]
    check(not left, "%s: no output left behind: %s" % (label, left))


def test_counters():
    make_run("r")
    out = accepted(["r"], "good run")
    check("| prefill | 1 | 1.000 |" in out, "good run: prefill row (%s)" % out[:600])
    with open("r/run.json") as f:
        run_json = json.load(f)
    check(abs(run_json["groups"]["prefill"]["energy"]["domains"]["package-0"]["j"] - 10.0) < 1e-6,
          "good run: 10 J from the package counter")
    body = open("r/counters.jsonl").read()
    rng = random.Random(11)
    cases = [
        ("", "empty file", "empty counters.jsonl"),
        (body[:37], "no counter reading", "counters.jsonl cut inside its first line"),
        (bytes(rng.randrange(256) for _ in range(5000)).decode("latin-1"), "no counter reading", "garbage counters.jsonl"),
        ("[1, 2, 3]\n\"x\"\n{\"no_time\": 1}\n", "no counter reading", "counters.jsonl of other JSON"),
    ]
    for text, why, label in cases:
        make_run("r")
        with open("r/counters.jsonl", "w", encoding="latin-1") as f:
            f.write(text)
        refused(["r"], "counters.jsonl", why, label)
        no_outputs("r", label)
    make_run("r")
    os.remove("r/counters.jsonl")
    os.mkdir("r/counters.jsonl")
    refused(["r"], "counters.jsonl", "regular file", "counters.jsonl a folder")
    for name in ("counters.jsonl", "phases.jsonl", "meta.json", "perfscope.log", "cpuprof.9.bin"):
        make_run("r")
        if os.path.exists("r/" + name):
            os.remove("r/" + name)
        os.mkfifo("r/" + name)
        refused(["r"], name, "regular file", "a FIFO named %s (must not block)" % name)
    # a cut last line is a killed run: used up to the cut
    make_run("r")
    with open("r/counters.jsonl", "a") as f:
        f.write('{"t_ns": 99999999999, "rapl": [{"zone": "intel-rap')
    accepted(["r"], "counters.jsonl cut in its last line")


def test_hostile_values():
    """Wrong types and absurd values inside the counters objects: used where they make sense,
    ignored where not, never a crash (the sanitizer build runs this)."""
    hostile = []
    for i in range(20):
        c = json.loads(json.dumps(GOOD_COUNTERS[i]))
        variants = [
            lambda c: c.update(rapl="not a list"),
            lambda c: c.update(gpus=[1, "x", None, {"index": -1}, {"index": 1e300}, {"index": 0.5}]),
            lambda c: c["rapl"].append({"zone": "z" * 5000, "energy_uj": 1}),
            lambda c: c["rapl"][0].update(energy_uj=-5),
            lambda c: c["rapl"][0].update(energy_uj=1e308),
            lambda c: c["rapl"][0].update(max_energy_range_uj="huge"),
            lambda c: c["rapl"].extend({"zone": "intel-rapl:%d" % k, "name": "dram", "energy_uj": k} for k in range(400)),
            lambda c: c.update(rss_anon_kib=[1]),
            lambda c: c["gpus"][0].update(procs_listed="yes", run_mem_mib=None),
            lambda c: c.update(t_ns=-1),
        ]
        variants[i % len(variants)](c)
        hostile.append(c)
    make_run("h", counters=hostile)
    accepted(["h"], "hostile counter values")
    make_run("h")
    with open("h/phases.jsonl", "w") as f:
        f.write(phase_line(1200000000, "prefill", "begin", counters={"rapl": {"a": 1}, "gpus": "x"}) + "\n")
        f.write(phase_line(1300000000, "prefill", "end", 9223372036854775807, counters=[1]) + "\n")
        f.write(phase_line(1400000000, "prefill", "begin", counters=None) + "\n")
        f.write(phase_line(1500000000, "prefill", "end", 9223372036854775807) + "\n")
        f.write(phase_line(1500000000, "idle", "begin") + "\n")
    accepted(["h"], "hostile boundary counters, overflowing tokens, an idle that never ends")
    # many groups: bounded output
    make_run("g")
    with open("g/phases.jsonl", "w") as f:
        for k in range(3000):
            f.write(phase_line(1000000000 + k * 1000, "g%d" % k, "begin") + "\n")
            f.write(phase_line(1000000000 + k * 1000 + 500, "g%d" % k, "end", k) + "\n")
    out = accepted(["g"], "3000 groups")
    check("2936 more groups are not shown" in out, "3000 groups: 64 shown, the rest counted")


def test_profile():
    for text, why, label in [("", "empty file", "empty profile.json"),
                             ('{"groups": {"prefill": {"self": [', "cut short", "profile.json cut short"),
                             ("\x00\x01garbage" * 50, "not a JSON object", "garbage profile.json"),
                             ('{"samples": 1}', "no \"groups\"", "profile.json without groups"),
                             ('[1, 2]', "another JSON value", "profile.json an array"),
                             ('{"groups": {}} {"groups": {}}', "trailing garbage", "two objects")]:
        make_run("p", samples=True)
        with open("p/profile.json", "w") as f:
            f.write(text)
        os.utime("p/profile.json", (4e9, 4e9))  # newer than the samples: read, not remade
        refused(["p"], "profile.json", why, label)
        no_outputs("p", label)
    make_run("p", samples=True)
    with open("p/profile.json", "w") as f:
        json.dump({"groups": {"prefill": {"self": [{"share": 1}, 7, {"name": "f|g\x01", "share": "x",
                                                                     "threads": 1e20, "line": -3}],
                                          "inclusive": "no", "busiest_threads": [{"cpu_s": 1e300, "tid": -1}]},
                              "": 5}}, f)
    os.utime("p/profile.json", (4e9, 4e9))
    out = accepted(["p"], "profile.json with hostile rows")
    check("f\\|g?" in out, "a function name is cleaned for its table cell")
    make_run("p", samples=True)
    with open("p/profile.json", "w") as f:
        json.dump({"groups": {"prefill": {"self": [{"name": "negative", "share": -9.2e18, "cpu_s": 1},
                                                   {"name": "over_one", "share": 7.5, "cpu_s": 1},
                                                   {"name": "fine", "share": 0.25, "cpu_s": 0.5}]}}}, f)
    os.utime("p/profile.json", (4e9, 4e9))
    out = accepted(["p"], "profile.json with shares out of 0..1")
    check("negative" not in out and "over_one" not in out and "fine" in out and "25.0%" in out,
          "rows whose share is not in 0..1 are left out, the others kept: %r" % out[-600:])


def serial_profile(path, group_cpu_s):
    with open(path, "w") as f:
        json.dump({"samples": 1, "dropped": 0, "period_s": 0.005, "groups": {"prefill": {
            "samples": 1, "cpu_s": group_cpu_s,
            "self": [{"name": "matmul", "share": 0.6, "cpu_s": 0.9, "threads": 1, "busiest_thread_s": 0.85,
                      "pct_of_wall_on_busiest_thread": 85.0, "source": "mm.c:10"},
                     {"name": "softmax", "share": 0.3, "cpu_s": 0.5, "threads": 4, "busiest_thread_s": 0.2,
                      "pct_of_wall_on_busiest_thread": 20.0},
                     {"name": "edge", "share": 0.1, "cpu_s": 0.8, "threads": 1, "busiest_thread_s": 0.8},
                     {"name": "spread", "share": 0.1, "cpu_s": 3.0, "threads": 4, "busiest_thread_s": 0.85,
                      "pct_of_wall_on_busiest_thread": 85.0}],
            "inclusive": [{"name": "main", "share": 1.0}],
            "busiest_threads": [{"tid": 7, "name": "main", "cpu_s": 0.9}]}}}, f)
    os.utime(path, (4e9, 4e9))


def test_serial_mark():
    """profile.json rows: `serial` exactly where one thread holds 80% or more of the group's wall
    AND 80% or more of the CPU time (the function's, or the group's) (prefill is 1.0 s long in
    make_run). The old rule looked at the wall alone: a parallel group at 1.7 cores whose busiest
    thread ran 90% of the wall was called serial on it."""
    make_run("s", samples=True)
    serial_profile("s/profile.json", 1.7)
    out = accepted(["s"], "profile.json with serial rows")
    rows = {l.split("|")[1].strip(): l for l in out.splitlines() if l.startswith("| ") and "%" in l}
    check("serial" in rows.get("matmul", "") and "mm.c:10" in rows.get("matmul", ""), "matmul serial: %s" % rows.get("matmul"))
    check("serial" not in rows.get("softmax", "-"), "softmax not serial: %s" % rows.get("softmax"))
    check("serial" in rows.get("edge", ""), "80%% exactly (from busiest_thread_s / wall) is serial: %s" % rows.get("edge"))
    check("serial" not in rows.get("spread", "-"),
          "85%% of the wall on one thread but 28%% of the function's CPU is not serial: %s" % rows.get("spread"))
    check("90% of the wall, 53% of the group's CPU\n" in out,
          "a group at 1.7 cores is not serial on a thread with 90%% of the wall: %s"
          % [l for l in out.splitlines() if l.startswith("Busiest")])
    with open("s/run.json") as f:
        g = json.load(f)["groups"]["prefill"]
    check(g.get("serial") is False and [r.get("serial") for r in g["hot"]["self"]] == [True, False, True, False],
          "run.json serial marks: %s %s" % (g.get("serial"), g.get("hot")))
    check(abs(g.get("busiest_thread_share_of_cpu", 0) - 0.9 / 1.7) < 1e-6, "run.json busiest_thread_share_of_cpu")
    # The same busiest thread in a group of 1.0 CPU s: 90% of the wall and of the CPU, serial.
    make_run("s1", samples=True)
    serial_profile("s1/profile.json", 1.0)
    out = accepted(["s1"], "profile.json with a serial group")
    check("90% of the wall, 90% of the group's CPU: the group is serial on it" in out, "group serial on its busiest thread")
    with open("s1/run.json") as f:
        check(json.load(f)["groups"]["prefill"].get("serial") is True, "run.json: the group is serial")


def test_llama_bench_output():
    make_run("l")
    with open("l/target.stdout", "wb") as f:
        f.write(b"[\n{\"n_prompt\": 512, \"n_gen\": 0, \"avg_ts\": " + b"9" * 100000 + b"\n" + bytes(range(256)) * 50)
    accepted(["l"], "garbage llama-bench output")
    with open("l/run.json") as f:
        check("llama_bench" not in json.load(f), "garbage llama-bench output not used")
    with open("l/target.stdout", "w") as f:
        f.write('log line\n{"n_prompt": 0, "n_gen": 64, "avg_ts": 41.5, "samples_ts": [41, 42]}\n{"cut": ')
    accepted(["l"], "llama-bench JSONL among log lines")
    with open("l/run.json") as f:
        lb = json.load(f).get("llama_bench", [])
    check(len(lb) == 1 and lb[0]["avg_ts"] == 41.5, "the one whole test is used: %s" % lb)


def test_cases_file():
    os.makedirs("A", exist_ok=True)
    base = ["matrix", "cases.json", "--a", "A=A", "--b", "B=A", "--precheck", "off", "--out", "mout"]
    rng = random.Random(5)
    bad = [
        ("", "empty file"),
        ('{"cases": [{"label": "x"}', "cut short|not a JSON"),
        (bytes(rng.randrange(256) for _ in range(3000)).decode("latin-1"), "not a JSON"),
        ('{"defaults": {}}', "no \"cases\" list"),
        ('{"cases": {"label": "x"}}', "no \"cases\" list"),
        ('{"defaults": [], "cases": []}', "\"defaults\" is not an object"),
        ('{"cases": [7]}', "case 1: not an object"),
        ('{"cases": [{"binary": "x"}]}', "case 1: no string \"label\""),
        ('{"cases": [{"label": "x", "args": "-p 5"}]}', "args is not a list"),
        ('{"cases": [{"label": "x", "args": [{"a": 1}]}]}', "not a string"),
        ('{"cases": [{"label": "x", "env": {"A=B": "1"}}]}', "bad variable"),
        ('{"cases": [{"label": "x", "env": ["A"]}]}', "env is not an object"),
        ('{"cases": [{"label": "x", "model": 5.5e300}]}', "model is not a string"),
        ('{"cases": [{"label": "x", "binary": null}]}', "binary is not a string"),
        ('{"cases": [{"label": "x", "prefix": [null]}]}', "not a string"),
        ('{"cases": [' + ",".join('{"label": "c%d"}' % k for k in range(5000)) + "]}", "more than 4096 cases"),
        ('{"cases": [{"label": "x", "args": [' + ",".join('"a"' for _ in range(1100)) + "]}]}", "more than 1024"),
        ("[" * 100000, "not a JSON"),
        ('{"cases": []}' + " " * (5 << 20), "too large"),
    ]
    for text, why in bad:
        with open("cases.json", "w", encoding="latin-1") as f:
            f.write(text)
        refused(base, "cases.json", why, "cases file: %s" % why)
    check(not os.path.exists("mout"), "no output folder made for a refused cases file")
    os.remove("cases.json")
    refused(base, "cases.json", "No such file", "missing cases file")
    with open("cases.json", "w") as f:
        f.write('{"cases": [{"label": "x", "binary": "engine"}]}')
    for opts, why in [(["--order", "ABC"], "--order"), (["--order", ""], "--order"),
                      (["--timeout", "-1"], "--timeout"), (["--timeout", "soon"], "--timeout"),
                      (["--precheck", "maybe"], "--precheck"), (["--only", "(["], "--only"),
                      (["--a", "noequals"], "NAME=DIR"), (["--a", "bad name=A"], "NAME=DIR"),
                      (["--b", "B=/no/such/dir"], "not a folder"), (["--bogus", "1"], "usage")]:
        args = ["matrix", "cases.json", "--a", "A=A", "--b", "B=A", "--precheck", "off", "--out", "mout"]
        for i in range(0, len(opts), 2):
            if opts[i] in args:
                args[args.index(opts[i]) + 1] = opts[i + 1]
            else:
                args += opts[i:i + 2]
        refused(args, opts[0] if opts[0] != "--bogus" else "usage", re.escape(why), "option %s" % opts)
    with open("noise.json", "w") as f:
        f.write('{"x": {"decode_tps": "wide"}}')
    refused(base + ["--noise", "noise.json"], "noise.json", ".", "a noise floor that is not a number")


def test_fifos():
    """A FIFO where a reader expects a file is refused or passed over at once, never waited on
    (every reader opens without blocking: format/textfile.c); the dumps of one file, the report
    and the run's dump with procs.jsonl a FIFO (hung in open() before, a reader's review)."""
    def finishes(args, label):
        try:
            p = subprocess.run([TOOL, *args], capture_output=True, text=True, errors="replace", timeout=20)
        except subprocess.TimeoutExpired:
            check(False, "%s: still running after 20 s (waiting on the FIFO)" % label)
            return None
        return p
    os.makedirs("fifo", exist_ok=True)
    if os.path.exists("fifo/p"):
        os.remove("fifo/p")
    os.mkfifo("fifo/p")
    for kind in ("samples", "maps", "phases"):
        p = finishes(["dump", kind, "fifo/p"], "dump %s of a FIFO" % kind)
        if p:
            check(p.returncode == 2 and "regular file" in p.stderr and len(p.stderr.splitlines()) == 1,
                  "dump %s of a FIFO: exit 2 and one line saying so (got %d, %r)" % (kind, p.returncode, p.stderr[-300:]))
    make_run("r", samples=True)
    os.mkfifo("r/procs.jsonl")
    for args in (["r"], ["dump", "run", "r"]):
        p = finishes(args, "%s with procs.jsonl a FIFO" % " ".join(args))
        if p:
            check(p.returncode in (0, 2), "%s with procs.jsonl a FIFO: exit %d (%r)" % (" ".join(args), p.returncode, p.stderr[-300:]))


def test_not_utf8():
    """Bytes that are not UTF-8 in the run folder's strings (meta.json's status, a zone name, a
    perfscope.log line) never reach the outputs as they are: run.json is still JSON a strict
    reader takes, report.md and report.html UTF-8 (a reader fuzz found them copied through)."""
    make_run("u")
    with open("u/meta.json", "wb") as f:
        f.write(b'{"schema": "perfscope-meta/1", "status": "exit \xff\xc0 3", "config": {"hz": 0}}')
    with open("u/perfscope.log", "wb") as f:
        f.write(b"perfscope[7]: a line with \xfe\xff bytes\n")
    with open("u/counters.jsonl", "ab") as f:
        f.write(b'{"t_ns": 3000000000, "rapl": [{"zone": "z\xc3", "name": "pkg\xff", "energy_uj": 30000000}]}\n')
    out = accepted(["u"], "strings that are not UTF-8")
    for name in ("run.json", "report.md", "report.html"):
        raw = open(os.path.join("u", name), "rb").read()
        try:
            raw.decode("utf-8")
            ok = True
        except UnicodeDecodeError as e:
            ok = False
            check(False, "%s: not UTF-8 at byte %d (%r)" % (name, e.start, raw[max(0, e.start - 40):e.start + 4]))
        if ok and name == "run.json":
            try:
                json.loads(raw.decode("utf-8"))
            except ValueError as e:
                check(False, "run.json: not JSON: %s" % e)


def main():
    for t in (test_counters, test_hostile_values, test_profile, test_serial_mark, test_llama_bench_output,
              test_cases_file, test_fifos, test_not_utf8):
        t()
    finish()


if __name__ == "__main__":
    main()
