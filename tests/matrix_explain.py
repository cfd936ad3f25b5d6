"""matrix_explain.py: what the matrix says beside compare.py's verdict (tests/t_tools_matrix_explain.sh),
on report_matrix.py's scripted builds and its helpers (python3, standard library only; checks as
tests/checks.py): the default order (ABBA until 5 runs a side) and the too-few-runs warning of a
short one; --a-env/--b-env/--a-args/--b-args reaching the arms' processes and matrix.json (an
engine whose decode time follows ENGINE_DECODE_S: B judged better); llama-bench's markdown table
read; warnings for arms with no throughput, --noise labels and floors that match nothing, and a
case whose every arm was dropped; --profile N's sampled arms, never judged, and their
function-level diff.
"""
import json
import os
import re

from checks import check, finish, require
from report_matrix import build, load, matrix, table_md


def warnings_of(case, text):
    return [w for w in case.get("warnings", []) if text in w]


def test_default_order():
    """Without --order: ABBA repeated until each side has 5 runs (ABBAABBAABBA), so a judgement can
    reach p < 0.05: no too-few-runs warning. With --order AB (1 against 1) the warning is there, in
    matrix.json, in table.md and on stderr, naming the metric and the runs needed."""
    p = matrix({"cases": [{"label": "mixed", "binary": "engine"}]}, "--a", "A=A", "--b", "B=B",
               "--precheck", "off", out="default")
    require(p.returncode == 0, "default-order matrix exit %d: %s" % (p.returncode, p.stderr))
    t = load("default")
    c = t["cases"][0]
    check(t["order"] == "ABBA" * 3 and [a["side"] for a in c["arms"]] == list("ABBA" * 3),
          "default order %s, arms %s" % (t["order"], [a["side"] for a in c["arms"]]))
    check(len(c["metrics"]["decode_tps"]["a_runs"]) == 6 and len(c["metrics"]["decode_tps"]["b_runs"]) == 6,
          "6 runs a side: %s" % c["metrics"]["decode_tps"])
    check(c["verdict"] == "tradeoff" and not warnings_of(c, "too few runs"),
          "default order: tradeoff, no too-few-runs warning (%s)" % c.get("warnings"))
    check("too few runs" not in p.stderr and "Warning" not in open("default/table.md").read(),
          "default order: nothing said of too few runs (%r)" % p.stderr)
    p = matrix({"cases": [{"label": "mixed", "binary": "engine"}]}, "--a", "A=A", "--b", "B=B",
               "--precheck", "off", "--order", "AB", out="few")
    c = load("few")["cases"][0]
    w = warnings_of(c, "too few runs")
    check(p.returncode == 0 and len(w) == 1 and "1 A against 1 B" in w[0] and "decode_tps" in w[0] and
          "at least 4 runs a side" in w[0], "AB: the too-few-runs warning (%s)" % c.get("warnings"))
    md = open("few/table.md").read()
    check(md == table_md(load("few")) and "Warning: mixed: too few runs" in md, "AB: the warning in table.md:\n%s" % md)
    check("warning: too few runs" in p.stderr, "AB: the warning on stderr (%r)" % p.stderr)


def test_side_settings():
    """--a-env/--b-env and --a-args/--b-args reach the arm's process (through the one runner) and
    matrix.json; an engine whose decode time follows ENGINE_DECODE_S: B given a shorter one is better."""
    p = matrix({"cases": [{"label": "env", "binary": "engine", "env": {"ENGINE_CASE": "1"}, "args": ["--case-arg"]}]},
               "--a", "A=A", "--b", "A2=A", "--precheck", "off", "--order", "ABBA",
               "--b-env", "ENGINE_DECODE_S=0.1", "--b-env", "ENGINE_CASE=b",
               "--a-args", "--tag  a1\ta2", "--b-args", "--tag b1", "--a-env", "ENGINE_SIDE=a", out="sides")
    require(p.returncode == 0, "side settings matrix exit %d: %s" % (p.returncode, p.stderr))
    t = load("sides")
    check(t["a_env"] == {"ENGINE_SIDE": "a"} and t["b_env"] == {"ENGINE_DECODE_S": "0.1", "ENGINE_CASE": "b"} and
          t["a_args"] == ["--tag", "a1", "a2"] and t["b_args"] == ["--tag", "b1"],
          "matrix.json records the side settings: %s" % {k: t.get(k) for k in ("a_env", "b_env", "a_args", "b_args")})
    c = t["cases"][0]
    for a in c["arms"]:
        with open(os.path.join(a["dir"], "engine.seen")) as f:
            seen = json.load(f)
        if a["side"] == "A":
            want_argv, want_env = ["--case-arg", "--tag", "a1", "a2"], {"ENGINE_CASE": "1", "ENGINE_SIDE": "a"}
        else:
            want_argv, want_env = ["--case-arg", "--tag", "b1"], {"ENGINE_CASE": "b", "ENGINE_DECODE_S": "0.1"}
        check(seen["argv"] == want_argv and seen["env"] == want_env,
              "arm %s %s: argv %s env %s" % (a["index"], a["side"], seen["argv"], seen["env"]))
    check(c["metrics"]["decode_tps"]["verdict"] == "better" and c["metrics"]["decode_tps"]["ratio"] == 2.0,
          "B's env halves decode: better (%s)" % c["metrics"]["decode_tps"])
    p = matrix({"cases": [{"label": "x", "binary": "engine"}]}, "--a", "A=A", "--b", "B=B", "--a-env", "NOEQUALS")
    check(p.returncode == 2 and "--a-env NOEQUALS" in p.stderr and len(p.stderr.splitlines()) == 1,
          "--a-env without '=' refused in one line (%d %r)" % (p.returncode, p.stderr))


def test_warnings():
    """llama-bench's markdown table read (no warning); an arm with no throughput said; --noise
    labels that match no case said; a case whose every arm was dropped says there is no verdict."""
    with open("noise2.json", "w") as f:
        json.dump({"mixed": {"decode_tps": 0.001, "decode_tsp": 0.5}, "no such case": {"decode_tps": 0.5}}, f)
    p = matrix({"defaults": {"binary": "engine"},
                "cases": [{"label": "mixed"}, {"label": "md", "args": ["--llama-bench-md"]},
                          {"label": "silent", "args": ["--silent"]}, {"label": "dead", "args": ["--crash-all"]}]},
               "--a", "A=A", "--b", "B=B", "--precheck", "off", "--order", "ABBA", "--noise", "noise2.json",
               out="warn")
    require(p.returncode == 0, "warnings matrix exit %d: %s" % (p.returncode, p.stderr))
    t = load("warn")
    by = {c["label"]: c for c in t["cases"]}
    check(len(t["warnings"]) == 1 and "\"no such case\" matches no case" in t["warnings"][0],
          "the noise label that matches no case: %s" % t["warnings"])
    check(warnings_of(by["mixed"], "\"decode_tsp\" is no metric") and
          len([w for w in by["mixed"]["warnings"] if "too few runs" not in w]) == 1,
          "mixed: only the misspelt floor is said (%s)" % by["mixed"]["warnings"])
    md = by["md"]
    check(md["metrics"]["prefill_tps"]["ratio"] == 1.1 and md["metrics"]["decode_tps"]["a_runs"] == [50.0] * 2 and
          not warnings_of(md, "no throughput"), "llama-bench markdown read: %s %s" % (md["metrics"], md.get("warnings")))
    w = warnings_of(by["silent"], "no throughput")
    check(len(w) == 2 and "2 of 2 usable A runs" in w[0] and "markdown table or -o json" in w[0],
          "silent arms: no throughput said per side (%s)" % by["silent"].get("warnings"))
    check(warnings_of(by["silent"], "--noise noise2.json has no floors for this case"),
          "a case without floors in the noise file is said (%s)" % by["silent"].get("warnings"))
    w = warnings_of(by["dead"], "no verdict")
    check(len(w) == 1 and "status \"exit 4\"" in w[0] and by["dead"]["verdict"] == "neutral",
          "dead: no verdict said, compare.py's word kept (%s)" % by["dead"].get("warnings"))
    table = open("warn/table.md").read()
    check(table == table_md(t) and "Warning: dead: no verdict" in table, "table.md warnings:\n%s" % table)
    for text in ("matches no case", "no throughput", "no verdict", "decode_tsp"):
        check(text in p.stderr, "stderr says %r (%r)" % (text, p.stderr[-2000:]))
    check("no throughput" not in json.dumps(by["mixed"]) and "no verdict" not in json.dumps(by["mixed"]),
          "no warning where none is due")


def test_all_dead():
    """A matrix whose every case has a side with no usable run has no verdict at all: table.md
    says so above compare.py's table (whose "neutral" stays) and the matrix exits 2 (DESIGN 11),
    as diff does; one judged case among them is enough for exit 0 (test_warnings)."""
    p = matrix({"defaults": {"binary": "engine"},
                "cases": [{"label": "dead", "args": ["--crash-all"]}, {"label": "crash", "args": ["--crash-b"]}]},
               "--a", "A=A", "--b", "B=B", "--precheck", "off", "--order", "AB", out="dead")
    t = load("dead")
    check(p.returncode == 2 and "no case has a verdict" in p.stderr,
          "every case without a verdict: exit %d (%r)" % (p.returncode, p.stderr[-500:]))
    md = open("dead/table.md").read()
    check(md == table_md(t) and md.startswith("**No verdict** for dead: no usable run on side A and B") and
          "\n**No verdict** for crash: no usable run on side B" in md and "| dead |" in md,
          "table.md:\n%s" % md)
    check(md in p.stdout, "the same table on stdout")
    check("  -> neutral:\n  no verdict: no usable run on side A and B (table.md says why)\n"
          in p.stdout and "  no verdict: no usable run on side B (table.md says why)" in p.stdout,
          "the case's log line is followed by its no-verdict line:\n%s" % p.stdout[-1500:])
    crash = [c for c in t["cases"] if c["label"] == "crash"][0]["warnings"]
    check(any("(A: 0 of 1 dropped; B: 1 of 1 dropped: 1 with status \"exit 3\")" in w for w in crash) and
          "sampled" not in json.dumps(crash), "crash: A's usable run not counted as dropped (%s)" % crash)


def test_profile():
    """--profile 2: two sampled runs a side after the judged arms, in profile_* folders, never
    judged; their function-level diff in functions.md, functions.json and functions.html (one
    differential flame graph per group, nothing fetched)."""
    p = matrix({"cases": [{"label": "mixed", "binary": "engine"}]}, "--a", "A=A", "--b", "B=B",
               "--precheck", "off", "--order", "AB", "--profile", "2", out="prof")
    require(p.returncode == 0, "profile matrix exit %d: %s" % (p.returncode, p.stderr))
    c = load("prof")["cases"][0]
    pa = c.get("profiled_arms", [])
    check([a["side"] for a in pa] == list("ABAB") and all(a.get("profiled") and a["status"] == "ok" and
          os.path.basename(a["dir"]).startswith("profile_") for a in pa), "profiled arms: %s" % pa)
    check(c["metrics"]["decode_tps"]["a_runs"] == [500] and c["dropped_runs"] == 0,
          "profiled arms never judged: %s" % c["metrics"]["decode_tps"])
    with open("prof/mixed/functions.json") as f:
        fj = json.load(f)
    check(len(fj["a_runs"]) == 2 and len(fj["b_runs"]) == 2 and [g["group"] for g in fj["groups"]][:2] == ["prefill", "decode"],
          "functions.json: %s" % {k: fj[k] for k in ("a_runs", "b_runs")})
    check(os.path.isfile("prof/mixed/functions.md") and "functions: " in p.stdout, "functions.md written and named")
    page = open("prof/mixed/functions.html", encoding="utf-8").read() if os.path.isfile("prof/mixed/functions.html") else ""
    check(page.count('class="ps-fig ps-flame"') == len(fj["groups"]) and not re.search(r"https?:", page),
          "functions.html: %d flame graphs for %d groups" % (page.count('class="ps-fig ps-flame"'), len(fj["groups"])))


if __name__ == "__main__":
    os.environ["MATRIX_TEST_NO_SLEEP"] = "1"  # the engines' sleeps are not needed here
    build("A", {"prefill": 0.15, "decode": 0.20})
    build("B", {"prefill": 0.1875, "decode": 0.16})
    for t in (test_default_order, test_side_settings, test_warnings, test_all_dead, test_profile):
        t()
    finish()
