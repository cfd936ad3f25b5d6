#!/usr/bin/env bash
# t_tools_report_html: OUT/report.html of a run with known phases (tests/targets/t_flame.c: mix
# burns 75% in burn_big and 25% in burn_small, deep has stacks cut at PERFSCOPE_MAX_FRAMES=16,
# inl an inlined function), opened in headless Chromium (Debian's chromium, which .ci/run
# installs): no console message, one flame graph per phase group with its functions at the widths
# their samples give (within 1 pp of stacks.folded), the cut stacks marked truncated, the inline
# frame marked inline, the #search= hash finding a function with its share, the memory chart one
# point per counters.jsonl line, the power chart (a constant 20 W zone written into a copy's
# counters.jsonl) one point per line at 20 W, the timeline one bar per phase, a screenshot that is not blank,
# no http:/https: in the file (tests/report_html.py); a garbage flame.json is bad input (exit 2).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || skip "chromium is not installed (apt-get install chromium): report.html not checked in a browser"
build_target t_flame
hz=199
if perf_events_allowed; then hz=997; fi
mkdir out
: >out/markers
env -u PERFSCOPE_OUT LD_PRELOAD="$SHIM" PERFSCOPE_OUT=out PERFSCOPE_HZ=$hz LLMPERFSCOPE_MARKERS=$PWD/out/markers \
  PERFSCOPE_COUNTER_MS=50 PERFSCOPE_MAX_FRAMES=16 "$TBUILD/t_flame" out/markers >target.log 2>&1 ||
  fail "t_flame failed: $(cat target.log)"
"$TOOL" out >report.txt 2>report.err || fail "perfscope-report out: exit $?: $(cat report.err)"
check "report.html written" test -s out/report.html
check "no temporary file left" test -z "$(ls out | grep '\.tmp\.')"
py_check "report.html in chromium" "$ROOT/tests/report_html.py" "$browser" out \
  '{"frames": [["mix", "burn_small", 0.15], ["mix", "burn_big", 0.6], ["deep", "burn_deep", 0.8], ["inl", "spin_inl", 0.8]],
    "truncated": "deep", "inline": ["inl", "spin_inl"]}'
# A flame.json that is there but garbage is bad input: one line naming it, exit 2, no page.
cp -a out bad   # timestamps kept: profile.json stays fresh, nothing is symbolized again
rm -f bad/report.html
printf '{"schema":"perfscope-flame/1","frames":[],"groups":[{"name":"x","samples":1,"nodes":[5,0,1]}]}\n' >bad/flame.json
"$TOOL" bad >bad.out 2>bad.err
rc=$?
check "garbage flame.json: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "garbage flame.json: one line naming it: $(cat bad.err)" [ "$(wc -l <bad.err)" -eq 1 ] && grep -q 'flame.json' bad.err
check "garbage flame.json: no report.html" test ! -e bad/report.html
# One RAPL zone at a constant 20 W written into every counters.jsonl line: the power chart has a
# point per line, each 20 W (energy over each interval, from the report's energy model).
cp -a out power
python3 - power/counters.jsonl <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
t0 = lines[0]["t_ns"]
with open(sys.argv[1], "w") as f:
    for o in lines:
        o["rapl"] = [{"zone": "intel-rapl:0", "name": "package-0", "energy_uj": 1000 + 20 * (o["t_ns"] - t0) // 1000,
                      "max_energy_range_uj": 262143328850}]
        f.write(json.dumps(o) + "\n")
EOF
touch -r out/counters.jsonl power/counters.jsonl
"$TOOL" power >power.out 2>power.err || bad "perfscope-report power: exit $?: $(cat power.err)"
py_check "power chart" "$ROOT/tests/report_html.py" --power "$browser" power 20

# Hostile names from a symbol table: escaped in the page, never markup, never the end of a script.
cp -a out evil
printf '%s\n' '{"schema":"perfscope-flame/1","frames":[["</script><script>alert(1)</script>","m<&>","f\"'"'"'.c:1",0,0]],"groups":[{"name":"mix","samples":1,"nodes":[-1,0,1]}]}' >evil/flame.json
"$TOOL" evil >evil.out 2>evil.err
check "hostile names: perfscope-report evil: exit $?: $(cat evil.err)" [ -s evil/report.html ]
check "hostile names: no markup made of a name" [ "$(grep -c 'alert(1)</script>' evil/report.html)" -eq 0 ]
checks_done
