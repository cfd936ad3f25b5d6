#!/usr/bin/env bash
# t_shim_review_loader: regressions from a review of the shim (docs/shim.md: the shim never changes
# the target's behaviour, output, exit status, errno, signals or descriptors), the loader, exec
# and fork inside libc. Each case runs its r_* target without and with the shim
# (PERFSCOPE_HZ=997) and compares (harness: tests/reviewlib.py); cases numbered as in the review:
#  4 runpath      dlopen("libplug.so") through the executable's DT_RUNPATH $ORIGIN/lib
#  9 failexec     after a failed execv, samples still go through libunwind (< 10% without)
# 13 daemon       daemon(1, 1) (fork inside libc): the child's samples and procs.jsonl start line; the errno daemon() leaves (the one set before it)
# 18 envp         main's envp after the program's setenv grew the environment 64 times (the shim's start added PERFSCOPE_RUN_ID): as it was, and an execve with it works (capsh --user's EFAULT); the exec'd shell joins the run
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review_loader.sh 4`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_failexec r_daemon r_envp; do
    build_target "$t"
done
# r_dlopen lives in its own folder, with libplug.so in lib/ below it, found through DT_RUNPATH.
mkdir -p "$TBUILD/r_dlopen.d/lib"
_build "$TBUILD/r_dlopen.d/lib/libplug.so" "$ROOT/tests/targets/r_plug.c" "${CC:-gcc}" -shared -fPIC
_build "$TBUILD/r_dlopen.d/r_dlopen" "$ROOT/tests/targets/r_dlopen.c" "${CC:-gcc}" \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
if command -v readelf >/dev/null 2>&1; then
    readelf -d "$TBUILD/r_dlopen.d/r_dlopen" | grep -q 'RUNPATH.*\$ORIGIN/lib' \
        || fail "r_dlopen was not linked with DT_RUNPATH \$ORIGIN/lib"
fi

REVIEW_PERF=0
if perf_events_allowed; then REVIEW_PERF=1; else note "perf events refused: the shim's 997 Hz falls back to the tick timer"; fi
export REVIEW_PERF

python3 - "$@" <<'EOF'
import os, signal, time
import sys
import samples
from reviewlib import *
from shimlib import target, plain_env, sig_name, TBUILD


def c_runpath():
    exe = os.path.join(TBUILD, "r_dlopen.d", "r_dlopen")
    base = run([exe], plain_env(), what="r_dlopen")
    need(base.rc == 0 and base.stdout == b"plug_value=42\n", "r_dlopen without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-runpath"), what="r_dlopen")
    same(base, res, "r_dlopen (DT_RUNPATH $ORIGIN/lib)")


def c_failexec():
    exe = target("r_failexec")
    base = run([exe], plain_env(), what="r_failexec")
    need(base.rc == 0, "r_failexec without the shim: %s" % sig_name(base.rc))
    out = "out-failexec"
    res = run([exe], senv(out), what="r_failexec")
    same(base, res, "r_failexec")
    s = meta_of(out).get("sampling", {})
    n, nolu = s.get("samples", 0), s.get("samples_without_libunwind", 0)
    note("r_failexec: %d samples, %d without libunwind" % (n, nolu))
    need(n >= 0.4 * 0.5 * RATE, "r_failexec: %d samples of 0.5 s of CPU at %d Hz" % (n, RATE))
    need(nolu < 0.1 * n, "r_failexec: %d of %d samples taken without libunwind after a failed execv "
         "(the shim still thinks it is inside exec)" % (nolu, n))


def kill_daemon(pidfile):
    """A daemon child left running (the run hung) is killed: it is in no process group of ours."""
    try:
        pid = int(open(pidfile).read())
        if b"r_daemon" in open("/proc/%d/cmdline" % pid, "rb").read():
            os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError):
        pass


def c_daemon():
    exe = target("r_daemon")
    base = run([exe, os.path.abspath("daemon-base.pid")], plain_env(), what="r_daemon")
    need(base.rc == 0 and base.stdout == b"daemon child done, errno 1234\n",
         "r_daemon without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    out = os.path.abspath("out-daemon")
    pidfile = os.path.abspath("daemon-shim.pid")
    # communicate() returns when the daemon child (which keeps stdout) has exited too.
    try:
        res = run([exe, pidfile], senv(out), what="r_daemon")
    finally:
        kill_daemon(pidfile)
    same(base, res, "r_daemon")
    child = int(open(pidfile).read())
    need(child != res.pid, "r_daemon: the child has the parent's pid")
    files, starts, n = {}, [], 0
    deadline = time.monotonic() + 5
    while True:  # the child's files are complete once it has exited; allow for a slow flush
        files = samples.bin_files(out)
        starts = [r for r in samples.read_jsonl(os.path.join(out, "procs.jsonl"))
                  if r.get("pid") == child and r.get("event") == "start"] \
            if os.path.exists(os.path.join(out, "procs.jsonl")) else []
        n = sum(len(samples.read_samples(p + ".bin").samples) for _, p in files.get(child, []))
        if (starts and n >= 0.4 * 0.5 * RATE) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    note("r_daemon: parent %d, child %d: %d samples, %d procs.jsonl start line(s)" % (res.pid, child, n, len(starts)))
    need(child in files, "r_daemon: no cpuprof.%d.bin for the daemon child (files: %s)"
         % (child, sorted(f for f in os.listdir(out) if f.startswith("cpuprof"))))
    need(n >= 0.4 * 0.5 * RATE, "r_daemon: the daemon child has %d samples of 0.5 s of CPU at %d Hz" % (n, RATE))
    need(starts, "r_daemon: procs.jsonl has no start line for the daemon child %d" % child)


def c_envp():
    out = "out-envp"
    base, res = base_then_shim([target("r_envp")], out, lambda b: b.rc == 0 and b.stdout == b"envp intact\nchild ran\n",
                               "r_envp")
    lines = [r for r in samples.read_jsonl(os.path.join(out, "procs.jsonl")) if r.get("pid") == res.pid]
    events = [(r.get("event"), os.path.basename(r.get("exe", ""))) for r in lines]
    note("r_envp: procs.jsonl lines %r" % events)
    kinds = [e for e, _ in events]
    need(kinds == ["start", "exec", "start", "exit"] and events[2][1] != "r_envp",
         "r_envp: procs.jsonl lines %r: the exec'd shell did not join the run" % events)


CASES = [(4, "runpath", c_runpath),
         (9, "failexec", c_failexec),
         (13, "daemon", c_daemon),
         (18, "envp", c_envp)]
run_cases(CASES, sys.argv[1:])
EOF
