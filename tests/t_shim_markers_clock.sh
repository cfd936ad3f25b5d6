#!/usr/bin/env bash
# t_shim_markers_clock: a marker's t= on another clock than the run's CLOCK_MONOTONIC (issue 8,
# defect 11; docs/shim.md): tests/targets/e_wallclock.c writes phases with t= from CLOCK_REALTIME
# in ns (`date +%s%N`), CLOCK_MONOTONIC in seconds and CLOCK_MONOTONIC two minutes ahead, and
# one with the right clock. Each wrong t= is logged in perfscope.log with its line number and
# its boundary taken when the leader read the line (t_from "read", inside the run), never 57
# years out; the right one is kept exactly (t_from "marker"). The target's output and status are
# its own. The parser's own table: t_markerline.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target e_wallclock

python3 - <<'EOF2'
import os, re
import samples
from shimlib import *

markers = os.path.abspath("markers")
exe = target("e_wallclock")
base = run([exe, os.path.abspath("plain-markers")], plain_env(), what="e_wallclock without the shim")
expect_ok(base, "e_wallclock without the shim")
res = run([exe, markers], shim_env("out", HZ=199, LLMPERFSCOPE_MARKERS=markers), what="e_wallclock")
expect_ok(res, "e_wallclock under the shim")
check(res.stdout == base.stdout == b"done\n" and res.stderr == base.stderr == b"",
      "output under the shim %r %r, without %r %r" % (res.stdout, res.stderr, base.stdout, base.stderr))
lines = open(markers).read().splitlines()
rows = {(r["name"], r["event"]): r for r in samples.read_phases("out/phases.jsonl")}
log = open("out/perfscope.log", errors="replace").read() if os.path.exists("out/perfscope.log") else ""
info("perfscope.log:\n#   " + "\n#   ".join(log.splitlines()))
# Lines in seconds are off the clock only when the run started more than a minute after boot.
off = ["wall", "future"] + (["secs"] if res.t0 > 61 * 10**9 else [])
if "secs" not in off:
    info("the machine booted less than a minute ago: t= in seconds may be on the clock")
for n, text in enumerate(lines, 1):
    name, event, t = re.match(r"^(\S+) (begin|end) t=(\d+)$", text).groups()
    r = rows.get((name, event))
    require(r, "line %d (%s): no boundary in phases.jsonl" % (n, text))
    if name == "mono":
        check(r["t_ns"] == int(t) and r.get("t_from") == "marker",
              "line %d (%s): t_ns %r t_from %r, want the line's t= and marker" % (n, text, r["t_ns"], r.get("t_from")))
        check(not re.search(r"line %d\b" % n, log), "line %d (%s) is on the run's clock but was logged" % (n, text))
    elif name in off:
        check(r.get("t_from") == "read" and res.t0 <= r["t_ns"] <= res.t1,
              "line %d (%s): t_ns %r (run %d..%d) t_from %r: want the time the line was read"
              % (n, text, r["t_ns"], res.t0, res.t1, r.get("t_from")))
        check(re.search(r"markers line %d: t=%s is not on the run's CLOCK_MONOTONIC" % (n, t), log),
              "line %d (%s): not logged with its line number as off the run's clock" % (n, text))
for name in off:
    b, e = rows[(name, "begin")]["t_ns"], rows[(name, "end")]["t_ns"]
    check(b <= e, "%s: begin %d after end %d" % (name, b, e))
finish()
EOF2
