#!/usr/bin/env bash
# t_shim_takeover: when the leader exits, a follower takes over the markers file where the
# leader stopped: no boundary recorded twice, and a long unfinished line (over 4 KiB, still
# open at the handover) is read whole by the successor, never from its middle.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_lead

python3 - <<'EOF2'
import json, os, subprocess, time
from shimlib import *

markers = os.path.abspath("markers")
env = shim_env("out", HZ=0, LLMPERFSCOPE_MARKERS=markers)
p = subprocess.Popen([target("r_lead"), "1", "1"], env=env)
deadline = time.monotonic() + 5
while not os.path.exists(markers):
    if time.monotonic() > deadline:
        die("the markers file was not created")
    time.sleep(0.01)
fd = os.open(markers, os.O_WRONLY | os.O_APPEND)
# A comment line of 6000 bytes whose middle reads like a boundary, unfinished at the handover.
os.write(fd, b"load begin\n# " + b"x" * 3000 + b" prefill begin pad=" + b"z" * 3000)
time.sleep(1.5)           # the leader (1 s) is gone; a child leads now
os.write(fd, b"\nload end\n")
os.close(fd)
p.wait(timeout=30)
time.sleep(1.5)           # the last child (2 s) exits after reading
rows = [json.loads(l) for l in open("out/phases.jsonl")]
got = [(r["name"], r["event"]) for r in rows]
info("boundaries: %s" % [(r["name"], r["event"], r["pid"], r.get("line")) for r in rows])
check(got == [("load", "begin"), ("load", "end")], "want load begin, load end once each, got %s" % got)
check(rows[-1].get("line") == 3, "line numbers go on across the handover: %s" % rows[-1].get("line"))
check(len({r["pid"] for r in rows}) == 2, "the second boundary should come from the new leader")
finish()
EOF2
