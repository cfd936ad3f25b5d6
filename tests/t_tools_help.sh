#!/usr/bin/env bash
# t_tools_help: every tool and subcommand answers --help and -h (usage on stdout, nothing on
# stderr, exit 0) and --version (exit 0, the one version); `perfscope help CMD` names CMD's
# usage; an unknown command or a bad usage still exits 2 with one line (issue 10, item 1).
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope
need_tool perfscope-report
need_tool perfscope-symbolize
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0

ok_help() { # WHAT ARGS...: exit 0, usage on stdout, stderr empty
  local what=$1; shift
  local out err rc
  out=$("$@" 2>err.txt); rc=$?; err=$(cat err.txt)
  check "$what: exit $rc (expected 0)" [ "$rc" -eq 0 ]
  check "$what: no usage on stdout: '$out'" grep -q "usage: " <<<"$out"
  check "$what: stderr not empty: '$err'" [ -z "$err" ]
}
bad_usage() { # WHAT ARGS...: exit 2, one line on stderr
  local what=$1; shift
  local rc n
  "$@" >/dev/null 2>err.txt; rc=$?; n=$(wc -l <err.txt)
  check "$what: exit $rc (expected 2)" [ "$rc" -eq 2 ]
  check "$what: $n lines on stderr (expected 1)" [ "$n" -eq 1 ]
}

P=$TOOLS/perfscope R=$TOOLS/perfscope-report S=$TOOLS/perfscope-symbolize
for h in --help -h; do
  ok_help "perfscope $h" "$P" "$h"
  ok_help "perfscope-report $h" "$R" "$h"
  ok_help "perfscope-symbolize $h" "$S" "$h"
  for c in record mark report symbolize diff noise matrix dump; do
    ok_help "perfscope $c $h" "$P" "$c" "$h"
  done
  for c in diff noise matrix dump; do
    ok_help "perfscope-report $c $h" "$R" "$c" "$h"
  done
done
ok_help "perfscope help" "$P" help
for c in record mark report symbolize diff noise matrix dump; do
  ok_help "perfscope help $c" "$P" help "$c"
  check "perfscope help $c names $c" grep -q "^usage: perfscope $c" <("$P" help "$c")
done
v=$("$P" --version); check "perfscope --version: '$v'" grep -Eq '^perfscope [0-9]+\.[0-9]+' <<<"$v"
for t in "$P" "$R" "$S"; do
  out=$("$t" --version); rc=$?
  check "$(basename "$t") --version: exit $rc" [ "$rc" -eq 0 ]
  check "$(basename "$t") --version: '$out' is not '${v#perfscope }'" [ "${out##* }" = "${v#perfscope }" ]
done
bad_usage "perfscope" "$P"
bad_usage "perfscope nosuch" "$P" nosuch
bad_usage "perfscope help nosuch" "$P" help nosuch
bad_usage "perfscope-report" "$R"
bad_usage "perfscope-report diff --bogus" "$R" diff --bogus
bad_usage "perfscope-symbolize" "$S"
bad_usage "perfscope report (no folder)" "$P" report
checks_done
