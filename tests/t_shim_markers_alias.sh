#!/usr/bin/env bash
# t_shim_markers_alias: PERFSCOPE_MARKERS is the same variable as LLMPERFSCOPE_MARKERS for the
# shim itself (preload/config.c), LLMPERFSCOPE_MARKERS winning when both are set:
# - only PERFSCOPE_MARKERS set: the target's own marker lines are its phases (phases.jsonl);
# - both set: the LLMPERFSCOPE_MARKERS file is read, the PERFSCOPE_MARKERS one (which already
#   holds a phase of its own) is not, and is neither created nor changed;
# - a relative PERFSCOPE_MARKERS is handed to the target's children absolute (after a cd they
#   still name the run's file); with both set, the other one is handed on as given.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_phases

python3 - <<'EOF2'
import os, subprocess
import samples
from shimlib import *

exe = target("t_phases")
want = [("alpha", "begin"), ("alpha", "end"), ("beta", "begin"), ("beta", "end"), ("req", "begin"),
        ("gamma", "begin"), ("gamma", "end"), ("req", "end")]


def boundaries(out):
    path = os.path.join(out, "phases.jsonl")
    return [(p["name"], p["event"]) for p in samples.read_phases(path)] if os.path.exists(path) else []


# Only PERFSCOPE_MARKERS: the file is read.
os.mkdir("a")
m = os.path.abspath("a/markers")
open(m, "w").close()
res = run([exe, m, "a.json"], shim_env("a", HZ=199, PERFSCOPE_MARKERS=m), what="t_phases (PERFSCOPE_MARKERS)")
expect_ok(res, "t_phases (PERFSCOPE_MARKERS)")
check(boundaries("a") == want, "only PERFSCOPE_MARKERS set: phases.jsonl %s, expected %s" % (boundaries("a"), want))

# Both: the LLMPERFSCOPE_MARKERS file wins; the other holds a phase that must not be read.
os.mkdir("b")
llm, own = os.path.abspath("b/llm.markers"), os.path.abspath("b/own.markers")
open(llm, "w").close()
with open(own, "w") as f:
    f.write("zeta begin\nzeta end\n")
res = run([exe, llm, "b.json"], shim_env("b", HZ=199, LLMPERFSCOPE_MARKERS=llm, PERFSCOPE_MARKERS=own),
          what="t_phases (both)")
expect_ok(res, "t_phases (both)")
check(boundaries("b") == want, "both set: phases.jsonl %s, expected %s (LLMPERFSCOPE_MARKERS's)" % (boundaries("b"), want))
check(open(own).read() == "zeta begin\nzeta end\n", "both set: PERFSCOPE_MARKERS's file changed: %r" % open(own).read())
log = open("b/perfscope.log").read() if os.path.exists("b/perfscope.log") else ""
check("zeta" not in log, "both set: the PERFSCOPE_MARKERS file was read: %r" % log[-400:])

# A relative PERFSCOPE_MARKERS reaches the children absolute, through system()/exec after a cd.
os.makedirs("c/sub")
os.chdir("c")
res = run(["/bin/sh", "-c", "cd sub && env"], shim_env("out", HZ=0, PERFSCOPE_MARKERS="m.markers"),
          what="sh (relative PERFSCOPE_MARKERS)")
expect_ok(res, "sh (relative PERFSCOPE_MARKERS)")
env = dict(l.split("=", 1) for l in res.stdout.decode().splitlines() if "=" in l)
check(env.get("PERFSCOPE_MARKERS") == os.path.abspath("m.markers"),
      "the child's PERFSCOPE_MARKERS %r, expected %r" % (env.get("PERFSCOPE_MARKERS"), os.path.abspath("m.markers")))
res = run(["/bin/sh", "-c", "cd sub && env"],
          shim_env("out2", HZ=0, LLMPERFSCOPE_MARKERS="l.markers", PERFSCOPE_MARKERS="m2.markers"),
          what="sh (both relative)")
expect_ok(res, "sh (both relative)")
env = dict(l.split("=", 1) for l in res.stdout.decode().splitlines() if "=" in l)
check(env.get("LLMPERFSCOPE_MARKERS") == os.path.abspath("l.markers") and env.get("PERFSCOPE_MARKERS") == "m2.markers",
      "both relative: the child got LLMPERFSCOPE_MARKERS %r, PERFSCOPE_MARKERS %r"
      % (env.get("LLMPERFSCOPE_MARKERS"), env.get("PERFSCOPE_MARKERS")))
check(not os.path.exists("m2.markers"), "both set: the PERFSCOPE_MARKERS file was created")
finish()
EOF2
