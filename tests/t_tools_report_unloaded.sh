#!/usr/bin/env bash
# t_tools_report_unloaded: a process of the run whose new image the shim did not load in
# (issue 8, defect 9: ld.so refused a relative LD_PRELOAD after a cd; also a static or setuid
# executable, an environment without LD_PRELOAD). procs.jsonl then has an exec line with no start
# after it. $TOOLS/perfscope-report says so in one line, and a run whose first process went on in
# such an image has status "unknown", never "killed" (it was not killed: its end was not seen).
# - end to end: tests/targets/e_cdexec.c execs itself with an environment without LD_PRELOAD;
# - synthetic folders: a child's unloaded image in a killed run (status killed, the child named);
#   an exec that failed (exit after it) and one that loaded (start after it): no such line;
#   procs.jsonl with bad lines: read around them.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
build_target e_cdexec
mkdir -p elsewhere

python3 - "$TOOL" <<'EOF2'
import json, os, re, subprocess, sys
from shimlib import *

tool, exe = sys.argv[1], target("e_cdexec")


def report(d):
    r = subprocess.run([tool, d], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "perfscope-report %s: exit %d: %s" % (d, r.returncode, r.stderr))
    status = [l for l in r.stdout.splitlines() if l.startswith("- status:")]
    unm = [l for l in r.stdout.splitlines() if l.startswith("- not measured:")]
    info("%s: %s" % (d, " / ".join(status + unm)))
    runjson = json.load(open(os.path.join(d, "run.json"))) if os.path.exists(os.path.join(d, "run.json")) else {}
    return (status[0] if status else ""), unm, runjson.get("status")


# End to end: the first process execs an image without LD_PRELOAD.
res = run([exe, "execve-noshim", "elsewhere", os.path.abspath("env-noshim")], shim_env("out", HZ=199), what="e_cdexec")
expect_ok(res, "e_cdexec execve-noshim")
meta = json.load(open("out/meta.json"))
check(meta.get("status") == "running", "meta.json's status %r: the new image had no shim to finish it" % meta.get("status"))
st, unm, rj = report("out")
check(st.startswith("- status: unknown (") and "killed" not in st,
      "status line %r: want unknown, saying the first process went on in an image the shim did not load in" % st)
check(len(unm) == 1 and re.search(r"1 image the shim did not load in, after exec \(pid %d\)" % res.pid, unm[0]),
      "want one line naming pid %d: %r" % (res.pid, unm))
check(rj == "unknown", "run.json's status %r, want unknown" % rj)

s_ = 10**9


def folder(d, procs, status="running", pid=100):
    os.mkdir(d)
    json.dump({"schema": "perfscope-meta/1", "pid": pid, "t0_ns": s_, "status": status,
               "config": {"hz": 0}}, open(os.path.join(d, "meta.json"), "w"))
    with open(os.path.join(d, "procs.jsonl"), "w") as f:
        for p in procs:
            f.write((p if isinstance(p, str) else json.dumps(p)) + "\n")


def line(pid, ev, ppid=1, **kw):
    return dict(pid=pid, ppid=ppid, event=ev, t_ns=2 * s_, **kw)


# A killed run whose child's new image did not load the shim.
folder("child", [line(100, "start", exe="/bin/a"), line(101, "start", 100, exe="/bin/a"), line(101, "exec")])
st, unm, rj = report("child")
check(st.startswith("- status: killed"), "child: status line %r, want killed (the leader itself was killed)" % st)
check(len(unm) == 1 and "(pid 101)" in unm[0], "child: want one line naming pid 101: %r" % unm)
# A failed exec carries on in the old image and exits; a loaded one starts again; bad lines.
folder("fine", [line(100, "start", exe="/bin/a"), line(100, "exec"), line(100, "exit", status="ok"),
                line(102, "start", 100), "not json", '{"pid": "x", "event": "exec"}', line(102, "exec"),
                line(102, "start", 100, exe="/bin/b"), line(102, "exit", status="ok")], status="ok")
st, unm, rj = report("fine")
check(st == "- status: ok" and not unm and rj == "ok", "fine: %r %r %r" % (st, unm, rj))
# The first process's image after exec, not loaded, with more after it.
folder("many", [line(100, "start"), line(100, "exec")] + [x for k in range(10) for x in
                (line(200 + k, "start", 100), line(200 + k, "exec"))])
st, unm, rj = report("many")
check(st.startswith("- status: unknown (") and rj == "unknown", "many: %r %r" % (st, rj))
check(len(unm) == 1 and "11 images" in unm[0] and "pid 100, 200," in unm[0] and ", ...)" in unm[0],
      "many: want one line of 11 images, the first 8 named: %r" % unm)
finish()
EOF2
