#!/usr/bin/env bash
# t_tools_report_terminal: the report on a terminal (docs/report.md, "On a terminal"). Under
# script(1) at 100 columns the report of a toy-engine run (as make demo's) and of a run whose hot
# function has a 300-byte name (tests/targets/t_longname) has no line wider than 100 columns
# (display width: the ellipsis is one), every table's columns start at the same offsets as its
# dashed rule, the long name is cut with an ellipsis there and kept whole in profile.json,
# run.json and report.md; COLUMNS narrows it; --markdown gives report.md's text, then stderr's
# one line naming the files written; not a terminal, stdout is report.md's text; perfscope
# record's short report on a terminal's stderr is laid out too.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
command -v script >/dev/null || skip "script (util-linux) is not installed: no terminal to test on"
[ -x "$BUILD/toy-engine" ] || fail "$BUILD/toy-engine is not built (make)"
build_target t_longname -I"$ROOT/include"
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE COLUMNS

LD_PRELOAD=$SHIM PERFSCOPE_OUT=$PWD/demo PERFSCOPE_HZ=997 "$BUILD/toy-engine" --threads 2 --scale 0.3 >/dev/null \
  || fail "toy-engine under the shim: exit $?"
LD_PRELOAD=$SHIM PERFSCOPE_OUT=$PWD/long PERFSCOPE_HZ=997 "$TBUILD/t_longname" >/dev/null \
  || fail "t_longname under the shim: exit $?"

# on_tty FILE CMD...: CMD's stdout and stderr as a 100-column terminal shows them.
on_tty() {
  local out=$1; shift
  script -qec "stty cols 100 rows 50; $*" /dev/null | tr -d '\r' >"$out"
}
for r in demo long; do
  "$TOOL" "$r" >"$r.pipe" 2>"$r.err" || fail "perfscope-report $r: $(cat "$r.err")"
  on_tty "$r.tty" "'$TOOL' $r"
  on_tty "$r.md" "'$TOOL' --markdown $r"
  on_tty "$r.72" "COLUMNS=72 '$TOOL' $r"
done
on_tty long.90 "COLUMNS=90 '$TOOL' long"
PERFSCOPE_SHIM=$SHIM on_tty rec.tty "'$TOOLS/perfscope' record -o rec -- '$TBUILD/t_longname' >/dev/null"
[ -x "$TOOLS/perfscope" ] || note "no $TOOLS/perfscope: the record check is skipped"

py_check "the terminal layout" - <<'PY'
import json, re
from checks import check, finish

NAME = re.search(r"DEFINE_BURN\((\w+)\)", open(__import__("os").environ["ROOT"] + "/tests/targets/t_longname.c").read()).group(1)
check(len(NAME) == 300, "the target's function name is 300 bytes: %d" % len(NAME))

def lines(path):
    return open(path, encoding="utf-8").read().splitlines()

def tables(ls):
    """(header lines, rule, rows) of every table: a rule line is dashes and spaces only."""
    out = []
    for i, l in enumerate(ls):
        if re.fullmatch(r"-+( +-+)+", l):
            head = []
            j = i - 1
            while j >= 0 and ls[j].strip():
                head.insert(0, ls[j]); j -= 1
            rows = []
            k = i + 1
            while k < len(ls) and ls[k].strip():
                rows.append(ls[k]); k += 1
            out.append((head, l, rows))
    return out

def aligned(tab, what):
    head, rule, rows = tab
    gaps = [i for i, ch in enumerate(rule) if ch == " "]
    for l in head + rows:
        check(len(l) <= len(rule), "%s: a table line is no longer than its rule (%d > %d): %r" % (what, len(l), len(rule), l))
        bad = [g for g in gaps if g < len(l) and l[g] != " "]
        check(not bad, "%s: columns' separators at the rule's offsets %s: %r" % (what, bad[:3], l))

for r in ("demo", "long"):
    tty = lines(r + ".tty")
    md = open("%s/report.md" % r, encoding="utf-8").read()
    check(len(tty) > 20, "%s: the terminal report has %d lines" % (r, len(tty)))
    wide = [l for l in tty if len(l) > 100]
    check(not wide, "%s: %d lines wider than 100 columns, the widest %d: %r" % (r, len(wide), max(map(len, tty)), wide[:2]))
    check(not any(l.startswith("|") for l in tty), "%s: no markdown table row on the terminal" % r)
    tabs = tables(tty)
    check(len(tabs) >= 3, "%s: %d tables on the terminal" % (r, len(tabs)))
    for t in tabs:
        aligned(t, r)
    check(any("CPU s" in l for t in tabs for l in t[0]), "%s: the units are in the headers" % r)
    # stdout and stderr share the terminal: report.md's text, then the line naming the files
    wrote = "perfscope-report: wrote %s/report.html, %s/report.md, %s/run.json" % (r, r, r)
    shown = open(r + ".md", encoding="utf-8").read().rstrip("\n").split("\n")
    check(shown[-1:] == [wrote], "%s: the last line on the terminal names the files written: %r" % (r, shown[-1:]))
    check("\n".join(shown[:-1]).rstrip("\n") == md.rstrip("\n"),
          "%s: --markdown on a terminal prints report.md's text" % r)
    check(open(r + ".pipe", encoding="utf-8").read() == md, "%s: not on a terminal, stdout is report.md" % r)
    n72 = lines(r + ".72")
    check(n72 and max(map(len, n72)) <= 72, "%s: COLUMNS=72 narrows it: widest %d" % (r, max(map(len, n72 or [""]))))
    for t in tables(n72):
        aligned(t, r + " at 72")

tty = open("long.tty", encoding="utf-8").read()
check(NAME not in tty, "the 300-byte name is cut on the terminal")
check(re.search(NAME[:20] + r"\w*\u2026", tty) is not None, "... with an ellipsis: %r" % [l for l in tty.splitlines() if NAME[:20] in l][:2])
md = open("long/report.md", encoding="utf-8").read()
check(NAME in md, "report.md keeps the whole name")
prof = json.load(open("long/profile.json"))
names = [row.get("name") for g in prof["groups"].values() for row in g.get("self", [])]
check(NAME in names, "profile.json keeps the whole name: %r" % [n[:40] + "...%d bytes" % len(n) for n in names if n][:4])
rj = json.load(open("long/run.json"))
rows = [row.get("name") for row in rj["groups"]["work"]["hot"]["self"]]
check(NAME in rows, "run.json keeps the whole name: %r" % [n[:40] + "...%d bytes" % len(n) for n in rows][:4])
n90 = lines("long.90")
check(max(map(len, n90)) <= 90, "COLUMNS=90: widest %d" % max(map(len, n90)))

import os
if os.path.exists("rec.tty") and os.path.exists("rec/run.json"):
    rec = lines("rec.tty")
    check(any(l.startswith("perfscope record: ") for l in rec), "record's summary line: %r" % rec[:3])
    check(rec and max(map(len, rec)) <= 100, "record's short report within 100 columns: widest %d" % max(map(len, rec or [""])))
    check(not any(l.startswith("|") for l in rec), "record's short report on a terminal is laid out: %r" % rec[:12])
    check(any(re.match(r"work +1 ", l) for l in rec), "record's phases table has work: %r" % rec[:16])
finish()
PY
checks_done
