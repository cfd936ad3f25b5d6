#!/usr/bin/env bash
# t_shim_review: regressions from a review of the shim (DESIGN 2: the shim never changes the
# target's behaviour, output, exit status, errno, signals or descriptors). Each case runs its
# r_* target without and with the shim (PERFSCOPE_HZ=997) and compares; each prints its own
# PASS/FAIL line, and the test fails if any case fails.
#  1 smallstack   a thread with a 32 KiB stack, ~17-20 KiB of it in use while sampled, runs on
#  2 exitsig      _exit(3) from a SIGALRM handler while main mallocs/frees: status 3, no hang
#                 (20 runs, 10 s each)
#  3 sigwait      all signals blocked, a burning worker, sigwait(): returns SIGTERM, never SIGPROF
#  4 runpath      dlopen("libplug.so") through the executable's DT_RUNPATH $ORIGIN/lib
#  5 alias        sigaction(sig, &sa, &sa) installs the new handler (SIGUSR1 and SIGPROF)
#  6 profreset    the target's SIGPROF handler (own ITIMER_PROF) with SA_RESETHAND and sa_mask:
#                 mask applied, reset after one delivery, the next tick kills by SIGPROF
#  7 exitcode     return -1 and exit(256): status 255 / 0, meta.json "exit 255" / "ok"
#  8 closerange   close_range(5, 3, 0) is -1 EINVAL
#  9 failexec     after a failed execv, samples still go through libunwind (< 10% without)
# 10 fdnum        the first open() in main returns 3 (libunwind's pipe is not at 3/4)
# 11 altstack     8 KiB alternate signal stack + SIGTERM: dies by SIGTERM, not SIGSEGV
# 12 vfork        a vfork child's signal(SIGPROF, SIG_DFL) does not change the parent
# 13 daemon       daemon(1, 1) (fork inside libc): the child's samples and procs.jsonl start line
# 14 fsize        RLIMIT_FSIZE big enough for the target's own file: no SIGXFSZ (5 runs)
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review.sh 2 sigwait`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_smallstk r_exitsig r_sigwait r_alias r_profreset r_exitcode r_closerange r_failexec \
         r_fdnum r_altstk r_vfork r_daemon r_fsz; do
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
import os, re, resource, select, signal, subprocess, sys, time
import samples
from shimlib import target, shim_env, plain_env, sig_name, Result, TBUILD

HZ = 997
# The rate the sample-count checks assume: 997 Hz needs perf events; without them the shim falls
# back to the tick timer, whose rate is the kernel's (100 Hz at the least).
RATE = HZ if os.environ.get("REVIEW_PERF") == "1" else 100


class CaseFail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise CaseFail(msg)


def run(argv, env, timeout=30, preexec_fn=None, what=None):
    """Run to completion; past `timeout` the run is killed and the case fails (a hang)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=preexec_fn)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        try:
            p.communicate(timeout=5)  # a daemon child may still hold the pipes
        except subprocess.TimeoutExpired:
            pass
        raise CaseFail("%s: still running after %g s (hang): %s" % (what or argv[0], timeout, " ".join(argv)))
    return Result(p.returncode, out, err, p.pid, t0, time.monotonic_ns())


def senv(out, **kw):
    kw.setdefault("HZ", HZ)
    return shim_env(os.path.abspath(out), **kw)


def same(base, res, what, stderr=True):
    """The run under the shim ended as the one without: status, stdout (and stderr)."""
    need(res.rc == base.rc, "%s: %s under the shim, %s without; stdout %r, stderr %r"
         % (what, sig_name(res.rc), sig_name(base.rc), res.stdout[-300:], res.stderr[-300:]))
    need(res.stdout == base.stdout, "%s: stdout under the shim %r, without %r" % (what, res.stdout[-400:], base.stdout[-400:]))
    if stderr:
        need(res.stderr == base.stderr, "%s: stderr under the shim %r, without %r" % (what, res.stderr[-400:], base.stderr[-400:]))


def meta_of(out):
    return samples.read_meta(os.path.join(out, "meta.json"))


def note(msg):
    print("#   " + msg)
    sys.stdout.flush()


# ---- the cases ----------------------------------------------------------------------------------

def c_smallstack():
    exe = target("r_smallstk")
    for use in (17000, 18500, 20000):
        what = "r_smallstk %d" % use
        base = run([exe, str(use)], plain_env(), what=what)
        need(base.rc == 0, "%s without the shim: %s" % (what, sig_name(base.rc)))
        res = run([exe, str(use)], senv("out-smallstk-%d" % use), what=what)
        same(base, res, what)


def c_exitsig():
    exe = target("r_exitsig")
    base = run([exe], plain_env(), timeout=10, what="r_exitsig")
    need(base.rc == 3, "r_exitsig without the shim: %s" % sig_name(base.rc))
    for k in range(20):
        delay = 1000 + 137 * k
        what = "r_exitsig %d (run %d of 20)" % (delay, k + 1)
        res = run([exe, str(delay)], senv("out-exitsig-%d" % k), timeout=10, what=what)
        need(res.rc == 3, "%s: %s under the shim, exit 3 without; stderr %r" % (what, sig_name(res.rc), res.stderr[-300:]))


def sigwait_run(env, what):
    # Unbuffered: readline() takes the "ready" line byte by byte and leaves the rest to communicate().
    p = subprocess.Popen([target("r_sigwait")], env=env, stdin=subprocess.DEVNULL, bufsize=0,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        r, _, _ = select.select([p.stdout], [], [], 10)
        line = p.stdout.readline() if r else b""
        if line == b"ready\n":
            time.sleep(0.5)
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            raise CaseFail("%s: still running 10 s after SIGTERM (hang)" % what)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return Result(p.returncode, line + out, err, p.pid, 0, 0)


def c_sigwait():
    base = sigwait_run(plain_env(), "r_sigwait")
    need(base.rc == 0 and base.stdout == b"ready\nsigwait returned signal 15\n",
         "r_sigwait without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = sigwait_run(senv("out-sigwait"), "r_sigwait under the shim")
    same(base, res, "r_sigwait")


def c_runpath():
    exe = os.path.join(TBUILD, "r_dlopen.d", "r_dlopen")
    base = run([exe], plain_env(), what="r_dlopen")
    need(base.rc == 0 and base.stdout == b"plug_value=42\n", "r_dlopen without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-runpath"), what="r_dlopen")
    same(base, res, "r_dlopen (DT_RUNPATH $ORIGIN/lib)")


def c_alias():
    exe = target("r_alias")
    base = run([exe], plain_env(), what="r_alias")
    need(base.rc == 0, "r_alias without the shim: %s" % sig_name(base.rc))
    res = run([exe], senv("out-alias"), what="r_alias")
    same(base, res, "r_alias (sigaction(sig, &sa, &sa))")


def c_profreset():
    exe = target("r_profreset")
    base = run([exe], plain_env(), what="r_profreset")
    want = b"handler ran 1 time(s); SIGUSR1 blocked in the handler: yes; disposition after: SIG_DFL\n"
    need(base.rc == -signal.SIGPROF and base.stdout == want,
         "r_profreset without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    for clock in ("auto", "timer"):
        res = run([exe], senv("out-profreset-%s" % clock, CLOCK=clock), what="r_profreset")
        same(base, res, "r_profreset PERFSCOPE_CLOCK=%s (SA_RESETHAND, sa_mask, own ITIMER_PROF)" % clock)


def c_exitcode():
    exe = target("r_exitcode")
    for mode, rc, status in (("ret", 255, "exit 255"), ("exit256", 0, "ok")):
        what = "r_exitcode %s" % mode
        base = run([exe, mode], plain_env(), what=what)
        need(base.rc == rc, "%s without the shim: %s" % (what, sig_name(base.rc)))
        out = "out-exitcode-%s" % mode
        res = run([exe, mode], senv(out), what=what)
        same(base, res, what)
        got = meta_of(out).get("status")
        need(got == status, "%s: meta.json status %r, the process's status is %r" % (what, got, status))


def c_closerange():
    exe = target("r_closerange")
    base = run([exe], plain_env(), what="r_closerange")
    need(base.rc == 0 and base.stdout.startswith(b"close_range(5, 3, 0) = -1 errno=Invalid argument\n"),
         "r_closerange without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-closerange"), what="r_closerange")
    same(base, res, "r_closerange")


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


def c_fdnum():
    exe = target("r_fdnum")
    base = run([exe], plain_env(), what="r_fdnum")
    need(base.rc == 0 and base.stdout == b"first open() in main returned 3, second 4\n",
         "r_fdnum without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-fdnum", UNWIND=None), what="r_fdnum")
    same(base, res, "r_fdnum (descriptor numbers)")


def c_altstack():
    exe = target("r_altstk")
    base = run([exe], plain_env(), what="r_altstk")
    need(base.rc == -signal.SIGTERM, "r_altstk without the shim: %s" % sig_name(base.rc))
    res = run([exe], senv("out-altstk"), what="r_altstk")
    same(base, res, "r_altstk (8 KiB sigaltstack, SIGTERM)")


def c_vfork():
    exe = target("r_vfork")
    base = run([exe], plain_env(), what="r_vfork")
    need(base.rc == 0 and base.stdout.endswith(b"profiling ticks: yes\n"),
         "r_vfork without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    res = run([exe], senv("out-vfork"), what="r_vfork")
    same(base, res, "r_vfork (the child's signal(SIGPROF, SIG_DFL))")


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
    need(base.rc == 0 and base.stdout == b"daemon child done\n",
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


def c_fsize():
    exe = target("r_fsz")
    limit = 64 * 1024

    def lim():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    base = run([exe, os.path.abspath("fsz-base.dat")], plain_env(), preexec_fn=lim, what="r_fsz")
    need(base.rc == 0 and base.stdout == b"wrote 32768 bytes\n", "r_fsz without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    for k in range(5):
        own = os.path.abspath("fsz-%d.dat" % k)
        what = "r_fsz under RLIMIT_FSIZE %d (run %d of 5)" % (limit, k + 1)
        res = run([exe, own], senv("out-fsz-%d" % k), preexec_fn=lim, what=what)
        same(base, res, what)
        need(os.path.getsize(own) == 32768, "%s: the target's own file holds %d bytes" % (what, os.path.getsize(own)))


CASES = [("smallstack", c_smallstack), ("exitsig", c_exitsig), ("sigwait", c_sigwait),
         ("runpath", c_runpath), ("alias", c_alias), ("profreset", c_profreset),
         ("exitcode", c_exitcode), ("closerange", c_closerange), ("failexec", c_failexec),
         ("fdnum", c_fdnum), ("altstack", c_altstack), ("vfork", c_vfork), ("daemon", c_daemon),
         ("fsize", c_fsize)]

only = set(sys.argv[1:])
failed = []
for i, (name, fn) in enumerate(CASES, 1):
    if only and str(i) not in only and name not in only:
        continue
    t0 = time.monotonic()
    try:
        fn()
        print("PASS case %d %s (%.1fs)" % (i, name, time.monotonic() - t0))
    except (CaseFail, SystemExit, Exception) as e:
        msg = str(e) if isinstance(e, CaseFail) else "%s: %s" % (type(e).__name__, e)
        print("FAIL case %d %s (%.1fs): %s" % (i, name, time.monotonic() - t0, msg))
        failed.append("%d %s" % (i, name))
    sys.stdout.flush()
if failed:
    print("FAIL: %d case(s) failed: %s" % (len(failed), ", ".join(failed)), file=sys.stderr)
    sys.exit(1)
EOF
