#!/usr/bin/env bash
# t_tools_symbolize_progress: symbolizing that takes a while says how far it is, on a terminal
# only. A run folder of 200k samples (a real run's records repeated) is symbolized under
# script(1): stderr gets "symbolizing: N/200k samples" lines rewritten with '\r' and erased at the
# end; with stderr a file, not one byte of it. The report, which runs the symbolizer, passes its
# terminal on. PERFSCOPE_PROGRESS_AFTER_MS=0 stands in for the second a big run takes (no timing
# is asserted).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-symbolize
command -v script >/dev/null || skip "script (util-linux) is not installed: no terminal to test on"
build_target t_longname -I"$ROOT/include"
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
unset PERFSCOPE_PROGRESS_AFTER_MS

LD_PRELOAD=$SHIM PERFSCOPE_OUT=$PWD/run PERFSCOPE_HZ=997 "$TBUILD/t_longname" >/dev/null || fail "t_longname: exit $?"
py - <<'PY' || fail "cannot make the big run"
import glob, sys
sys.path.insert(0, __import__("os").environ["ROOT"] + "/tests")
from samples import read_samples, write_samples
for path in glob.glob("run/cpuprof.*.bin"):
    sf = read_samples(path)
    recs = [(s.t, s.tid, s.comm, s.frames[:16]) for s in sf.samples]
    big = [recs[i % len(recs)] for i in range(200000)]
    write_samples(path, big, 16, hz=sf.hz)
PY
rm -f run/profile.json

script -qec "PERFSCOPE_PROGRESS_AFTER_MS=0 '$TOOL' run >/dev/null" /dev/null >tty.out
rc=$?
check "perfscope-symbolize under script: exit $rc" [ "$rc" -eq 0 ]
PERFSCOPE_PROGRESS_AFTER_MS=0 "$TOOL" run >/dev/null 2>file.err
check "perfscope-symbolize, stderr a file: exit 0" [ $? -eq 0 ]
rm -f run/profile.json
script -qec "PERFSCOPE_PROGRESS_AFTER_MS=0 '$TOOLS/perfscope-report' run >/dev/null" /dev/null >report.tty
rm -f run/profile.json
PERFSCOPE_PROGRESS_AFTER_MS=0 "$TOOLS/perfscope-report" run >/dev/null 2>report.err
py_check "progress" - <<'PY'
import re
from checks import check, finish
tty = open("tty.out", "rb").read().decode("utf-8", "replace")
check(re.search(r"\rsymbolizing: [0-9.]+k?/200k samples", tty) is not None,
      "on a terminal: a progress line 'symbolizing: N/200k samples': %r" % tty[:200])
check(tty.count("\r") >= 3 and re.search(r"\r +\r", tty) is not None,
      "rewritten with \\r and erased at the end: %r" % tty[-200:])
err = open("file.err", "rb").read()
check(b"symbolizing" not in err and b"\r" not in err, "stderr a file: no progress: %r" % err[:200])
rt = open("report.tty", "rb").read().decode("utf-8", "replace")
check("symbolizing: " in rt, "perfscope-report on a terminal passes its terminal on: %r" % rt[:200])
re_ = open("report.err", "rb").read()
check(b"symbolizing" not in re_ and b"\r" not in re_, "perfscope-report, stderr a file: no progress: %r" % re_[:200])
finish()
PY
checks_done
