#!/usr/bin/env bash
# t_tools_readme: the README's own shell blocks, as written, so the README cannot drift. The first
# ```sh block under "## perfscope record" and the one under "## Profiling a program by hand" are
# taken from README.md and run with bash -e in a folder that has the build tree as build/ and
# examples/ (as the repository's root has them):
# - record: the toy engine's own perfscope.h phases (load, prefill, decode) end in out.old/ once
#   the marker script's run has taken out/, whose phases are warmup and generate with their
#   tokens; `perfscope report out` prints them;
# - by hand: the script run under LD_PRELOAD with PERFSCOPE_MARKERS marks prefill and decode,
#   each boundary with perfscope mark's t=, and the report has both with their tokens.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope
need_tool perfscope-report
need_tool perfscope-symbolize
[ -x "$BUILD/toy-engine" ] || fail "$BUILD/toy-engine is not built (make)"
unset LLMPERFSCOPE_MARKERS PERFSCOPE_MARKERS PERFSCOPE_SHIM PERFSCOPE_OUT LD_PRELOAD
[ -f "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0

# build/ as the README means it: the tools under test, the shim, the toy engine.
mkdir build
for t in perfscope perfscope-report perfscope-symbolize; do ln -s "$TOOLS/$t" build/$t; done
ln -s "$SHIM" build/libperfscope.so
ln -s "$BUILD/toy-engine" build/toy-engine
ln -s "$ROOT/examples" examples

python3 - "$ROOT/README.md" <<'EOF' || fail "README.md: a block is missing"
import sys
lines = open(sys.argv[1]).read().split("\n")
for heading, out in (("## perfscope record", "record.sh"), ("## Profiling a program by hand", "by_hand.sh")):
    try:
        i = lines.index(heading)
        j = lines.index("```sh", i)
        k = lines.index("```", j + 1)
    except ValueError:
        sys.exit("README.md has no ```sh block under %r" % heading)
    nxt = [n for n in range(i + 1, len(lines)) if lines[n].startswith("## ")]
    if nxt and nxt[0] < j:
        sys.exit("README.md's section %r has no ```sh block of its own" % heading)
    open(out, "w").write("\n".join(lines[j + 1:k]) + "\n")
EOF

bash -e record.sh >record.out 2>record.err
rc=$?
check "README's record block: exit $rc (stderr: $(tail -c 800 record.err))" [ "$rc" -eq 0 ]
bash -e by_hand.sh >by_hand.out 2>by_hand.err
rc=$?
check "README's by-hand block: exit $rc (stderr: $(tail -c 800 by_hand.err))" [ "$rc" -eq 0 ]
for g in warmup generate; do
  check "perfscope report out prints the $g phase: $(head -c 1500 record.out)" grep -qw "$g" record.out
done
for g in prefill decode; do
  check "perfscope-report by-hand/ prints the $g phase: $(head -c 1500 by_hand.out)" grep -qw "$g" by_hand.out
done

py_check "run.json of the README's runs" - <<'EOF'
import json, os
from checks import check, finish
import samples


def groups(d):
    p = os.path.join(d, "run.json")
    if not os.path.exists(p):
        check(False, "%s has no run.json" % d)
        return {}
    rj = json.load(open(p))
    check(rj.get("status") == "ok", "%s: status %r" % (d, rj.get("status")))
    return rj.get("groups", {})


g = groups("out.old")
check({"load", "prefill", "decode"} <= set(g), "out.old (toy-engine's own phases): groups %s" % sorted(g))
g = groups("out")
for name, tok in (("warmup", 20), ("generate", 80)):
    check(g.get(name, {}).get("tokens") == tok and g[name].get("occurrences") == 1,
          "out (examples/record_phases.sh): %s %r" % (name, g.get(name)))
g = groups("by-hand")
for name, tok in (("prefill", 64), ("decode", 16)):
    check(g.get(name, {}).get("tokens") == tok and g[name].get("occurrences") == 1
          and g[name].get("wall_s", 0) > 0, "by-hand: %s %r" % (name, g.get(name)))
p = "by-hand/phases.jsonl"
ph = samples.read_phases(p) if os.path.exists(p) else []
check(len(ph) == 4 and all(x.get("t_from") == "marker" for x in ph),
      "by-hand/phases.jsonl: 4 boundaries with perfscope mark's t=: %r"
      % [(x.get("name"), x.get("event"), x.get("t_from")) for x in ph])
finish()
EOF
checks_done
