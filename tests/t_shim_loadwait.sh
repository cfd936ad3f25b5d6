#!/usr/bin/env bash
# t_shim_loadwait: nothing the target does waits for the shim's loading of libunwind (at the first
# sample, preload/sampler.c), whose dlopen waits for the loader's lock as long as a target's
# dlopen holds it (a library's constructor running: tests/targets/r_loadwait.c and
# r_loadwait_lib.c, at 997 Hz). Checked by the order of what the target says, never by time:
# - exit: a constructor computes 0.1 s (samples come) and exits with status 3: the process ends
#   with 3 (the way out joined a writer that waited for the lock the exiting thread held: a hang);
# - exec: main execs while thread A's dlopen sleeps 1.5 s in the constructor: the exec comes
#   first ("A: dlopen done" never shows), as without the shim (it waited for A's dlopen);
# - fork: the same with a fork whose child makes 3 dup2 calls: the child is done before A's
#   dlopen (the fork waited 2 s for the shim's load, and the child's dup2 calls 0.5 s each);
# - seccomp: the constructor makes 3 dup2 calls and installs a seccomp filter: it ends (a hang).
# Each fails on faeaadd, the first version of the first-sample load; none without the shim. The
# target runs as a child of a shell, so that it is not the run's leader: the leader's watcher
# dlopens NVML at its start, and a target's dlopen holding the loader's lock holds it there too,
# and its join on the way out for up to 2 s (docs/shim.md, Known limits): another wait than the
# one tested.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_loadwait -pthread
build_lib r_loadwait_lib

python3 - <<'EOF2'
import os
from shimlib import *

T, LIB = target("r_loadwait"), os.path.join(TBUILD, "r_loadwait_lib.so")
cases = [("exit", "exit", {"LOADWAIT_CTOR": "exit"}), ("exec", "exec", {"LOADWAIT_MS": "1500"}),
         ("fork", "fork", {"LOADWAIT_MS": "1500"}), ("seccomp", "none", {"LOADWAIT_SECCOMP": "1", "LOADWAIT_DUP2": "3"})]

def said(res):
    return [l for l in (res.stdout + res.stderr).decode("utf-8", "replace").splitlines() if l]

def judge(name, res, who):
    lines = said(res)
    if name == "exit":
        check(res.rc == 3 and lines == ["ctor: exit 3"], "exit (%s): rc %s, said %s" % (who, res.rc, lines))
    elif name == "exec":
        check(res.rc == 0 and lines == ["exec: done"], "exec (%s): rc %s, said %s" % (who, res.rc, lines))
    elif name == "fork":
        order = [l for l in lines if l in ("child: done", "A: dlopen done (loaded)")]
        check(res.rc == 0 and order == ["child: done", "A: dlopen done (loaded)"],
              "fork (%s): rc %s, said %s" % (who, res.rc, lines))
    else:
        check(res.rc == 0 and "ctor: seccomp filter rc 0" in lines and "main: done" in lines,
              "seccomp (%s): rc %s, said %s" % (who, res.rc, lines))

for name, mode, extra in cases:
    judge(name, run([T, LIB, mode], plain_env(**extra), timeout=20, what="%s without the shim" % name), "no shim")
    for i in range(2):
        env = shim_env("out-%s-%d" % (name, i), HZ=997)
        env.update(extra)
        res = run(["sh", "-c", 'timeout -k 2 15 "$@"; exit $?', "sh", T, LIB, mode], env, timeout=30,
                  what="%s under the shim" % name)
        judge(name, res, "the shim, run %d" % (i + 1))
finish()
EOF2
