#!/usr/bin/env bash
# Test runner: runs every tests/t_*.sh (or those whose name contains $1), each in its own
# temporary folder, with a time limit; exit 0 passes, 77 skips, anything else fails.
# Each test gets ROOT, BUILD, SHIM (always $BUILD's shim) and TOOLS, where the tools are taken
# from: $ROOT/$PERFSCOPE_TOOLS, else $BUILD (make test-asan: PERFSCOPE_TOOLS=build-asan, filter
# "tools", so every test that runs a tool is named t_tools_*). Helpers and the check
# convention: tests/lib.sh, tests/checks.py.
# Ends with the one summary line CI reads: "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/.."
export ROOT=$PWD
export BUILD=${BUILD:-$ROOT/build}
export TOOLS=${PERFSCOPE_TOOLS:+$ROOT/$PERFSCOPE_TOOLS}
export TOOLS=${TOOLS:-$BUILD}
export SHIM=$BUILD/libperfscope.so
filter=${1:-}
pass=0 fail=0 skip=0 failed=()
logdir=$(mktemp -d /tmp/perfscope-tests.XXXXXX)
# The symbolizer's debug info cache (docs/symbolize.md): one for the whole run, never the user's.
export PERFSCOPE_DEBUG_CACHE=$logdir/debug-cache
for t in tests/t_*.sh; do
  name=$(basename "$t" .sh)
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  work=$(mktemp -d /tmp/perfscope-$name.XXXXXX)
  start=$EPOCHREALTIME
  ( cd "$work" && TMPDIR_TEST=$work timeout -k 5 "${TEST_TIMEOUT:-180}" bash "$ROOT/$t" ) >"$logdir/$name.log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
  case $rc in
    0) pass=$((pass+1)); echo "PASS $name (${secs}s)"; rm -rf "$work" ;;
    77) skip=$((skip+1)); echo "SKIP $name: $(tail -n 1 "$logdir/$name.log")"; rm -rf "$work" ;;
    *) fail=$((fail+1)); failed+=("$name"); echo "FAIL $name (rc=$rc, ${secs}s)"
       sed 's/^/    | /' "$logdir/$name.log" | tail -n 40 ;;
  esac
done
rm -rf "$PERFSCOPE_DEBUG_CACHE"
echo
if [ $skip -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ $fail -eq 0 ]
