#!/usr/bin/env bash
# t_shim_log_once: a fact about the machine is said once a run in perfscope.log, not once an
# image: a leader that execs (a wrapper script's `exec`, a pyenv shim's chain of env and bash)
# starts its counters again in every image, and each said again that there is no RAPL and no
# NVML (ps_log_run_once, preload/log.c). A leader of 7 images with neither must leave each
# line once; a line of another kind already in the log must not hold back these; and a leader
# that meets a different machine fact later (another NVML path in a later image) still says it.
set -u
. "$ROOT/tests/lib.sh"
need_shim

python3 - <<'EOF2'
import os
from shimlib import *

nothing = os.path.abspath("nothing")
chain = "exec env bash -c 'exec env bash -c \"exec env true\"'"


def lines(out, text):
    path = os.path.join(out, "perfscope.log")
    log = open(path).read().splitlines() if os.path.exists(path) else []
    return [l for l in log if text in l]


# Seven images of one leader (bash, env, bash, env, bash, env, true), no RAPL, no NVML: each line once.
res = run(["bash", "-c", chain], shim_env("a", PERFSCOPE_POWERCAP_ROOT=nothing, PERFSCOPE_NVML=nothing + "/libnvidia-ml.so.1"),
          what="an exec chain")
expect_ok(res, "an exec chain")
images = [l for l in load_json_lines("a/procs.jsonl") if l["event"] == "start"]
check(len(images) == 7, "the leader's images: %d start lines, expected 7" % len(images))
for what in ("RAPL: cannot open", "NVML not loaded"):
    got = lines("a", what)
    check(len(got) == 1, "%r said %d times in perfscope.log of a leader's 7 images, expected once: %s"
          % (what, len(got), got[:1]))

# The log already has lines of other kinds (and one that holds the text in a longer line):
# these are said all the same.
os.mkdir("b")
with open("b/perfscope.log", "w") as f:
    f.write("perfscope[1]: something else\nperfscope[1]: not this: counters: RAPL: cannot open %s: No such "
            "file or directory; no CPU energy, really\n" % nothing)
res = run(["bash", "-c", chain], shim_env("b", PERFSCOPE_POWERCAP_ROOT=nothing, PERFSCOPE_NVML=nothing + "/libnvidia-ml.so.1"),
          what="an exec chain (a log there)")
expect_ok(res, "an exec chain (a log there)")
for what in ("RAPL: cannot open %s: No such file or directory; no CPU energy" % nothing, "NVML not loaded"):
    got = [l for l in lines("b", what) if not l.startswith("perfscope[1]:")]
    check(len(got) == 1, "with a log already there, %r said %d times, expected once: %s" % (what, len(got), got[:1]))

# A later image meets another NVML path: that is another fact, and is said.
other = nothing + "/other/libnvidia-ml.so.1"
script = "exec env PERFSCOPE_NVML=%s bash -c 'exec env true'" % other
res = run(["bash", "-c", script], shim_env("c", PERFSCOPE_POWERCAP_ROOT=nothing, PERFSCOPE_NVML=nothing + "/libnvidia-ml.so.1"),
          what="an exec chain (the NVML path changed)")
expect_ok(res, "an exec chain (the NVML path changed)")
got = lines("c", "NVML not loaded")
check(len(got) == 2 and any(other in l for l in got),
      "two NVML paths in one run: %d lines (%s), expected one for each" % (len(got), got))
finish()
EOF2
