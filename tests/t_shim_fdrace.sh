#!/usr/bin/env bash
# t_shim_fdrace: the shim never takes, closes or replaces a descriptor number the target is about
# to use (docs/shim.md, descriptors; preload/fdgate.h).
# 1. r_fdrace dup2()s its file onto the low number 7, yields, checks with fstat that 7 is still
#    its file, closes it and opens /dev/null, which must get 7 again, in 4 runs of 3000 rounds
#    under the shim (997 Hz, counters off, two threads creating short threads, so the shim opens
#    files often on its threads and on the new ones). Checked: no dup2 answers EBUSY and no round
#    finds its descriptor closed or replaced; the open's number is checked to at most 1 round in
#    1000 (a number the target frees and then opens again, above 2, is not waited for). Before
#    fdgate: EBUSY in 2242 of 12000 rounds, and up to 1 in 150 rounds replaced.
# 2. The shell's own redirections beside the markers protocol: dash appends 4000 lines to a file
#    and 4000 marker lines to the markers file, each `echo ... >> file` a close(1) and dup2 of
#    dash's, while the watcher reads every marker line (counters every 1 ms), 3 runs. Every line
#    must land and dash must print nothing: before fdgate about 1 line in 70 was lost ("echo: I/O
#    error": the shim's open took number 1 between dash's close and dup2, and its close took
#    dash's redirection away) and the shim's own phase lines landed in dash's stderr. Also
#    checked: perfscope.log never says a descriptor of the shim's was let go of unseen (the
#    gate's first version leaked one at each /proc read of the leader's machine scan).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_fdrace -pthread

python3 - <<'EOF2'
import os
import re
from shimlib import *

def counts(res, what):
    require(res.rc == 0, "%s: exit %s, output %r %r" % (what, res.rc, res.stdout, res.stderr[-300:]))
    m = re.match(rb"rounds (\d+) ebusy (\d+) replaced (\d+) wrongnum (\d+) other (\d+)\n$", res.stdout)
    require(m, "%s: output %r" % (what, res.stdout))
    return [int(x) for x in m.groups()]

base = counts(run([target("r_fdrace"), "3000"], plain_env(), what="r_fdrace"), "r_fdrace without the shim")
require(base[1:] == [0, 0, 0, 0], "r_fdrace without the shim: %r" % (base,))
tot = [0] * 5
for i in range(4):
    c = counts(run([target("r_fdrace"), "3000"], shim_env("out-%d" % i, HZ=997, COUNTER_MS=0),
                   what="r_fdrace under the shim"), "r_fdrace under the shim")
    info("run %d: %r" % (i, c))
    tot = [a + b for a, b in zip(tot, c)]
info("under the shim: %d rounds, dup2 EBUSY %d, descriptor closed/replaced %d, open() number moved %d, other %d"
     % tuple(tot))
check(tot[1] == 0, "dup2 onto 7 answered EBUSY in %d of %d rounds (a number the shim was taking)" % (tot[1], tot[0]))
check(tot[2] == 0, "the shim closed or replaced the target's descriptor 7 in %d of %d rounds" % (tot[2], tot[0]))
check(tot[3] * 1000 <= tot[0], "open() after close(7) got another number in %d of %d rounds (at most 1 in 1000)" % (tot[3], tot[0]))
check(tot[4] == 0, "dup2 failed otherwise than EBUSY in %d rounds" % tot[4])

# 2. dash's redirections beside the markers protocol.
script = ('i=0; while [ $i -lt 4000 ]; do echo x >> "$1"; echo "p$i begin" >> "$LLMPERFSCOPE_MARKERS"; '
          'i=$((i+1)); done; echo done')
for i in range(3):
    out = os.path.abspath("dash-%d" % i)
    os.makedirs(out)
    lines, markers = os.path.join(out, "lines"), os.path.join(out, "markers")
    env = shim_env(os.path.join(out, "run"), COUNTER_MS=1, LLMPERFSCOPE_MARKERS=markers)
    res = run(["/bin/dash", "-c", script, "dash", lines], env, what="dash's redirection loop")
    got = open(lines, "rb").read().count(b"\n") if os.path.exists(lines) else 0
    marks = open(markers, "rb").read().count(b"\n") if os.path.exists(markers) else 0
    check(res.rc == 0 and res.stdout == b"done\n" and res.stderr == b"" and got == 4000 and marks == 4000,
          "run %d: dash under the shim: exit %s, stdout %r, %d of 4000 lines, %d of 4000 marker lines, stderr %r"
          % (i, res.rc, res.stdout, got, marks, res.stderr[:300]))
    # Every number the shim took is let go of on a path it sees (a leaked announcement would
    # hold every close of the target's for up to 50 ms after each of the shim's opens).
    log = os.path.join(out, "run", "perfscope.log")
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    check("let go of unseen" not in text, "run %d: perfscope.log: %r" % (i, text[-300:]))
finish()
EOF2
