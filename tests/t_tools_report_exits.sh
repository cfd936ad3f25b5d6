#!/usr/bin/env bash
# t_tools_report_exits: how $TOOLS/perfscope-report states the end of runs whose end no wrapper
# saw, or that ended at once (issue 8, defects 5 and 13; format/runmeta.c's runmeta_status):
# - a Go program linked with the C library (tests/targets/x_go.go, when `go` is installed) ends
#   with a raw exit_group: "ended unseen", saying it is a Go program, never "killed";
# - a process a seccomp filter kills (x_seccomp_open die): "ended unseen", saying a filter;
# - a C program ending with a raw exit_group (x_rawexit): nothing says why, so "killed" as
#   before (SIGKILL leaves the same trace);
# - a process that ends with _exit(3) at once (x_quick_exit): "exit 3", not "unknown".
# The runs are made under the shim ($SHIM); the report is $TOOLS's ("tools" in the name: make
# test-asan runs it under ASan/UBSan).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
for t in x_rawexit x_seccomp_open x_quick_exit; do
    build_target "$t"
done
GO_EXE=
if command -v go >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1; then
    mkdir -p "$TBUILD"
    if GOCACHE="$TBUILD/gocache" GOPATH="$TBUILD/gopath" GO111MODULE=off GOFLAGS= CGO_ENABLED=1 \
        go build -o "$TBUILD/x_go" "$ROOT/tests/targets/x_go.go" >go-build.log 2>&1; then
        GO_EXE=$TBUILD/x_go
    else
        cat go-build.log
        bad "go is installed but cannot build tests/targets/x_go.go"
    fi
else
    note "go is not installed: the Go case is skipped"
fi

py_check report_exits - "$TOOL" "$GO_EXE" <<'EOF2'
import json
import os
import subprocess
import sys

from checks import check, finish, require
from shimlib import shim_env, target, run, sig_name

TOOL, GO_EXE = sys.argv[1], sys.argv[2]


def report(out):
    p = subprocess.run([TOOL, out], capture_output=True, text=True, timeout=120)
    require(p.returncode == 0, "report %s: exit %d: %s" % (out, p.returncode, p.stderr.strip()))
    with open(os.path.join(out, "run.json")) as f:
        return json.load(f), p.stdout


def status_line(text):
    return next((l for l in text.splitlines() if l.startswith("- status:")), "")


cases = [("x_seccomp_open die", [target("x_seccomp_open"), "die"], -31, "ended unseen", "seccomp filter"),
         ("x_rawexit", [target("x_rawexit")], 0, "killed", "never recorded its exit"),
         ("x_quick_exit", [target("x_quick_exit")], 3, "exit 3", None)]
if GO_EXE:
    cases.insert(0, ("x_go", [GO_EXE], 0, "ended unseen", "Go program"))
for what, argv, rc, status, words in cases:
    out = os.path.abspath("out-" + what.replace(" ", "-"))
    res = run(argv, shim_env(out, HZ=997), timeout=60, what=what)
    if not check(res.rc == rc, "%s: %s under the shim, want %s" % (what, sig_name(res.rc), sig_name(rc))):
        continue
    run_json, text = report(out)
    line = status_line(text)
    print("# %s: %s" % (what, line))
    check(run_json.get("status") == status, "%s: run.json status %r, want %r" % (what, run_json.get("status"), status))
    check(line.startswith("- status: " + status), "%s: the report says %r" % (what, line))
    if words:
        check(words in line, "%s: the status line does not say %r: %r" % (what, words, line))
finish()
EOF2
checks_done
