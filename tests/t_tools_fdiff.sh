#!/usr/bin/env bash
# t_tools_fdiff: `perfscope-report diff --profiles` (report/ab/fdiff.c), the function-level diff,
# on tests/targets/fd_target.c built twice (B spends 50% more CPU in kern_ffn, in decode): 5
# profiled runs a side name kern_ffn first, significant; 20 seeded
# A/A trials on run folders made from one real run (tests/fdiff_check.py) stay within chance;
# bad input is one line and exit 2; runs that marked no phases are said to have none (and such a run's report gives (none) its
# inclusive rows). --html FILE's differential flame graph is opened in headless
# Chromium (tests/fdiff_html_check.py; that part skipped, said in one line, without chromium). The runs are under $SHIM; the tool is $TOOLS's.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
W=$PWD
gcc "${TCFLAGS[@]}" -o "$W/fd_a" "$ROOT/tests/targets/fd_target.c" || fail "cannot build fd_target"
gcc "${TCFLAGS[@]}" -DFFN_S=0.15 -o "$W/fd_b" "$ROOT/tests/targets/fd_target.c" || fail "cannot build fd_target B"
# interleaved, so that a machine whose load drifts meanwhile does not tell the sides apart
for i in 1 2 3 4 5; do
  for side in a b a2; do
    LD_PRELOAD=$SHIM PERFSCOPE_OUT=$W/$side/r$i PERFSCOPE_HZ=997 "$W/fd_${side%2}" || fail "fd_$side run $i failed"
  done
done
py_check fdiff "$ROOT/tests/fdiff_check.py" "$TOOL" "$W"
# Runs that marked no phases: no group to compare, and the diff says so (it printed its first
# line alone before), exit 0.
for side in np_a np_b; do
  LD_PRELOAD=$SHIM PERFSCOPE_OUT=$W/$side PERFSCOPE_HZ=997 sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' ||
    fail "the phaseless run $side failed"
done
out=$("$TOOL" diff --profiles "$W/np_a" -- "$W/np_b" 2>&1); rc=$?
says_none() { [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q "these runs marked no phases"; }
check "diff --profiles of runs without phases: exit 0 and says they marked none (rc $rc: $out)" says_none
# And the report of such a run: all of it is (none), whose hot functions have inclusive rows too.
rep=$("$TOOL" "$W/np_b" 2>&1)
none_incl() { printf '%s\n' "$rep" | sed -n '/^### (none)/,/^## /p' | grep -q '^| inclusive |'; }
check "the report of a run without phases: (none) has its inclusive rows" none_incl
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ]; then
  py_check "fdiff --html in chromium" "$ROOT/tests/fdiff_html_check.py" "$TOOL" "$W" "$browser"
else
  note "chromium is not installed (apt-get install chromium): diff --html not checked in a browser"
fi
checks_done
