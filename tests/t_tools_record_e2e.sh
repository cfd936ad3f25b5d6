#!/usr/bin/env bash
# t_tools_record_e2e: the README's example for real: `perfscope record -o OUT --
# examples/record_phases.sh`, a shell script that runs build/toy-engine twice and marks two
# phases with `perfscope mark`. The phases are in the report (stderr), run.json and phases.jsonl
# with their tokens; stdout is the engine's output alone; the exit status is the script's.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope
[ -x "$BUILD/toy-engine" ] || fail "$BUILD/toy-engine is not built (make)"
[ -f "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
unset LLMPERFSCOPE_MARKERS PERFSCOPE_MARKERS

LLMPERFSCOPE_MARKERS=$PWD/direct.markers PERFSCOPE=$TOOL ENGINE=$BUILD/toy-engine "$ROOT/examples/record_phases.sh" >direct.out 2>/dev/null \
  || fail "record_phases.sh alone: exit $?"
PERFSCOPE=$TOOL ENGINE=$BUILD/toy-engine "$TOOL" record -o out -- "$ROOT/examples/record_phases.sh" >rec.out 2>rec.err
rc=$?
check "perfscope record: exit $rc (stderr: $(tail -c 600 rec.err))" [ "$rc" -eq 0 ]
check "stdout is the engine's two lines: $(cat rec.out)" cmp -s direct.out rec.out
check "the summary line names 2 phases: $(grep '^perfscope record:' rec.err)" \
  grep -q '^perfscope record: [0-9]* samples, [0-9]* processes, 2 phases -> out$' rec.err
check "the last line says where the report's files are: $(tail -n 1 rec.err)" \
  [ "$(tail -n 1 rec.err)" = "perfscope record: wrote out/report.html, out/report.md, out/run.json" ]
for f in report.html report.md run.json; do
  check "out/$f is there" [ -s "out/$f" ]
done
"$TOOL" report out >rep.out 2>rep.err
check "perfscope report: its one stderr line names the files it wrote: $(cat rep.err)" \
  [ "$(cat rep.err)" = "perfscope: wrote out/report.html, out/report.md, out/run.json" ]
for g in warmup generate; do
  check "the short report's phases table has $g: $(grep -A8 '## Phases' rec.err)" grep -q "^| $g | 1 |" rec.err
done
py_check run.json - <<'EOF2'
import json
from checks import check, finish
rj = json.load(open("out/run.json"))
g = rj.get("groups", {})
check(set(g) >= {"warmup", "generate"}, "run.json groups: %s" % sorted(g))
check(rj.get("status") == "ok", "run.json status %r" % rj.get("status"))
for name, tok in (("warmup", 20), ("generate", 80)):
    x = g.get(name, {})
    check(x.get("occurrences") == 1 and x.get("tokens") == tok, "%s: %r" % (name, x))
    check(x.get("wall_s", 0) > 0, "%s wall_s %r" % (name, x.get("wall_s")))
check(rj["groups"]["warmup"].get("wall_s", 0) < rj["groups"]["generate"].get("wall_s", 0),
      "the bigger run is the longer phase")
lines = open("out/markers").read().splitlines()
check(len(lines) == 4 and all(" t=" in l for l in lines), "out/markers: %r" % lines)
log = open("out/perfscope.log").read() if __import__("os").path.exists("out/perfscope.log") else ""
check("not on the run's" not in log and "bad" not in log.lower(), "perfscope.log takes every marker: %r" % log[-500:])
finish()
EOF2
checks_done
