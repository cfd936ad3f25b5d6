#!/usr/bin/env bash
# t_tools_mark: `perfscope mark` and python/perfscope_markers.py (docs/record.md):
# - one line "NAME begin|end [key=value...] t=NS" appended, t= between the caller's
#   time.monotonic_ns() before and after the call (the same CLOCK_MONOTONIC);
# - exit 2 and one line without LLMPERFSCOPE_MARKERS/PERFSCOPE_MARKERS, for a bad name, event or
#   attribute, and nothing written; --file F; PERFSCOPE_MARKERS as the same variable, the
#   LLMPERFSCOPE_ name winning when both are set;
# - the Python module: phase() around a with block (also one that raises), mark(), a no-op with
#   the variable unset, each line one write (lines from 4 processes never interleave).
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope

py_check mark - "$TOOL" "$ROOT/python" <<'EOF2'
import os, re, subprocess, sys, time
from checks import check, finish

tool, pydir = sys.argv[1], sys.argv[2]
base = {k: v for k, v in os.environ.items() if not k.endswith("PERFSCOPE_MARKERS")}
LINE = re.compile(r"^([A-Za-z0-9_.-]+) (begin|end)((?: [A-Za-z0-9_.-]+=\S+)*) t=(\d+)$")


def mark(args, **env):
    e = dict(base)
    e.update(env)
    return subprocess.run([tool, "mark"] + args, env=e, capture_output=True, text=True, timeout=60)


def lines(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


# t= is the caller's clock.
t0 = time.monotonic_ns()
r = mark(["prefill", "begin"], LLMPERFSCOPE_MARKERS="m1")
t1 = time.monotonic_ns()
r2 = mark(["prefill", "end", "tokens=512", "request=7"], LLMPERFSCOPE_MARKERS="m1")
t2 = time.monotonic_ns()
check(r.returncode == 0 and r2.returncode == 0 and not r.stdout and not r.stderr,
      "perfscope mark: exit %d/%d, out %r err %r" % (r.returncode, r2.returncode, r.stdout, r.stderr))
got = lines("m1")
check(len(got) == 2, "m1 holds two lines: %r" % got)
if len(got) == 2:
    a, b = LINE.match(got[0]), LINE.match(got[1])
    check(a and a.group(1) == "prefill" and a.group(2) == "begin" and a.group(3) == "", "line 1 %r" % got[0])
    check(b and b.group(3) == " tokens=512 request=7", "line 2 %r" % got[1])
    if a and b:
        ta, tb = int(a.group(4)), int(b.group(4))
        check(t0 <= ta <= t1, "t=%d not within the caller's monotonic clock %d..%d" % (ta, t0, t1))
        check(t1 <= tb <= t2, "t=%d not within the caller's monotonic clock %d..%d" % (tb, t1, t2))

# Refusals: exit 2, one line, nothing written.
for args, env, why in [(["load", "begin"], {}, "not set"),
                       (["load", "begin"], {"LLMPERFSCOPE_MARKERS": ""}, "not set"),
                       (["bad name", "begin"], {"LLMPERFSCOPE_MARKERS": "m2"}, "bad phase name"),
                       (["x" * 65, "begin"], {"LLMPERFSCOPE_MARKERS": "m2"}, "bad phase name"),
                       (["", "begin"], {"LLMPERFSCOPE_MARKERS": "m2"}, "bad phase name"),
                       (["load", "start"], {"LLMPERFSCOPE_MARKERS": "m2"}, "not begin or end"),
                       (["load"], {"LLMPERFSCOPE_MARKERS": "m2"}, "NAME and begin|end"),
                       (["load", "end", "tokens=abc"], {"LLMPERFSCOPE_MARKERS": "m2"}, "not a count"),
                       (["load", "end", "t=5"], {"LLMPERFSCOPE_MARKERS": "m2"}, "t= is"),
                       (["load", "end", "novalue"], {"LLMPERFSCOPE_MARKERS": "m2"}, "key=value"),
                       (["load", "end", "--file"], {}, "needs a file")]:
    r = mark(args, **env)
    err = r.stderr.splitlines()
    check(r.returncode == 2, "mark %r %r: exit %d, expected 2" % (args, env, r.returncode))
    check(len(err) == 1 and why in err[0], "mark %r: stderr %r, expected one line with %r" % (args, err, why))
check(not os.path.exists("m2"), "a refused mark wrote nothing")

# --file; PERFSCOPE_MARKERS; both set: LLMPERFSCOPE_MARKERS wins.
check(mark(["a", "begin", "--file", "f1"]).returncode == 0 and len(lines("f1")) == 1, "--file f1")
check(mark(["a", "begin"], PERFSCOPE_MARKERS="p1").returncode == 0 and len(lines("p1")) == 1, "PERFSCOPE_MARKERS alone")
check(mark(["a", "begin"], PERFSCOPE_MARKERS="p2", LLMPERFSCOPE_MARKERS="l2").returncode == 0
      and len(lines("l2")) == 1 and not os.path.exists("p2"), "both set: LLMPERFSCOPE_MARKERS wins")

# The Python module.
sys.path.insert(0, pydir)
import perfscope_markers as pm

os.environ.pop("LLMPERFSCOPE_MARKERS", None)
os.environ.pop("PERFSCOPE_MARKERS", None)
with pm.phase("quiet", tokens=3):
    pm.mark("quiet2", "begin")
check(not [f for f in os.listdir(".") if f.startswith("quiet")], "unset: a no-op")
os.environ["LLMPERFSCOPE_MARKERS"] = os.path.abspath("py1")
t0 = time.monotonic_ns()
with pm.phase("decode", tokens=128, request=7):
    t1 = time.monotonic_ns()
    check(len(lines("py1")) == 1, "inside the with block: the begin line is already written: %r" % lines("py1"))
t2 = time.monotonic_ns()
try:
    with pm.phase("boom"):
        raise KeyError("x")
except KeyError:
    pass
pm.mark("load", "end", tokens=5)
got = lines("py1")
check(len(got) == 5, "py1: 5 lines, got %r" % got)
m = [LINE.match(l) for l in got]
check(all(m), "every line is a marker line: %r" % got)
if len(got) == 5 and all(m):
    check([x.group(1) + " " + x.group(2) for x in m] == ["decode begin", "decode end", "boom begin", "boom end", "load end"],
          "the events in order: %r" % got)
    check(m[0].group(3) == " request=7" and m[1].group(3) == " tokens=128 request=7", "attributes: %r" % got[:2])
    check(t0 <= int(m[0].group(4)) <= t1 <= int(m[1].group(4)) <= t2, "t= from time.monotonic_ns(): %r" % got[:2])
try:
    pm.mark("bad name", "begin")
    check(False, "a bad name raises ValueError")
except ValueError:
    check(True, "")
os.environ.pop("LLMPERFSCOPE_MARKERS")
os.environ["PERFSCOPE_MARKERS"] = os.path.abspath("py2")
pm.mark("alias", "begin")
check(len(lines("py2")) == 1, "the module takes PERFSCOPE_MARKERS too")

# Each line one write: 4 processes, 300 lines each, nothing interleaved.
code = ("import sys; sys.path.insert(0, %r); import perfscope_markers as pm\n"
        "for i in range(300): pm.mark('w%%s' %% sys.argv[1], 'begin', pad='x' * 200, i=i)" % pydir)
env = dict(base, LLMPERFSCOPE_MARKERS=os.path.abspath("py3"))
ps = [subprocess.Popen([sys.executable, "-c", code, str(k)], env=env) for k in range(4)]
for p in ps:
    p.wait(timeout=60)
got = lines("py3")
check(len(got) == 1200 and all(LINE.match(l) for l in got), "4 x 300 whole lines: %d lines, %d bad" %
      (len(got), sum(1 for l in got if not LINE.match(l))))
finish()
EOF2
checks_done
