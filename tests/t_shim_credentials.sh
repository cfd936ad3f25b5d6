#!/usr/bin/env bash
# t_shim_credentials: a program that changes its own thread's credentials (capset,
# PR_SET_KEEPCAPS) and then calls the C library's setuid family, which changes every thread's and
# aborts the process when one thread's call fails where another's did not, runs under the shim
# as without it, though the shim's writer and watcher are threads (docs/shim.md, "Credentials
# changed on one thread"), and the shim's threads are back after the calls:
#  1 setxid    r_credcalls burn (setpriv's steps by hand) as the run's leader: the same lines; no sample
#              dropped after the calls (0.6 s at 997 Hz, more than a ring holds)
#  2 setpriv   util-linux's `setpriv --reuid --regid` (with --clear-groups, and with
#              --init-groups --inh-caps=-all), as the run's leader and as a shell's child
#  3 shared     in a run folder of mode 0777 (as perfscope makes a container's), a shell's
#              children that became nobody (setpriv's `id`, r_credcalls burn) still write their
#              procs.jsonl lines into the files root made (made with the folder's write bits)
#  4 calls      r_credcalls: 4 threads calling prctl(PR_SET_KEEPCAPS) at once; the calls from a
#              SIGALRM handler that interrupts malloc (3 runs); a child of glibc's clone() at the
#              start of main calling setresuid (10 runs: it waited forever for a shim thread
#              not yet running); the calls under a seccomp filter that kills on open; capset
#              flips and setgroups at the process's start (10 runs: SIGABRT in 30 of 100 when
#              libunwind's warm-up thread was started without the latest sets); a SIGALRM
#              handler dropping a capability while its thread's own call waits (3 runs: SIGABRT
#              in 10 of 10 when the nested change went unpublished). Each as without the shim,
#              within 30 s
#  5 link       in a 0777 run folder, nobody plants a link named as the shell's maps file to a
#              root file of mode 0600 outside; the shell then takes samples: the file is left as
#              it was (a link was followed, and the file made 0666 with maps text in it); and
#              FIFOs in place of procs.jsonl and perfscope.log: the run ends (it hung for good)
#  6 repeat     setpriv as the run's leader at 997 Hz, 40 runs (a race with libunwind's warm-up
#              thread aborted 3 in 150 runs of a first version: not certain to show)
# Root only: the calls change to another user. Optional argument: case numbers or names.
set -u
. "$ROOT/tests/lib.sh"
need_shim
[ "$(id -u)" = 0 ] || skip "needs root (setresuid to another user): not run"
command -v setpriv >/dev/null || skip "setpriv (util-linux) missing: not run"
build_target r_credcalls -pthread

REVIEW_PERF=0
if perf_events_allowed; then REVIEW_PERF=1; else note "perf events refused: the shim's 997 Hz falls back to the tick timer"; fi
export REVIEW_PERF

python3 - "$@" <<'PYEOF'
import os, shutil, subprocess, sys, tempfile, time
import samples
from reviewlib import *
from shimlib import target, plain_env, sig_name

EXPECT = (b"keepcaps: ok\nsetresuid: ok\ncapset: ok\nsetresgid: ok\n"
          b"uid 65534 gid 65534\n")


def c_setxid():
    out = "out-setxid"
    base, res = base_then_shim([target("r_credcalls"), "burn"], out, lambda b: b.rc == 0 and b.stdout == EXPECT,
                               "r_credcalls burn")
    n, dropped = samples_of(out, res.pid)
    note("r_credcalls burn: %d samples, %d dropped (0.9 s of CPU at %d Hz)" % (n, dropped, RATE))
    need(dropped == 0, "r_credcalls burn: %d samples dropped: the writer did not come back after capset" % dropped)
    need(n >= 0.7 * 0.9 * RATE, "r_credcalls burn: %d samples of 0.9 s of CPU at %d Hz" % (n, RATE))


def only_unusable_folder_line(what, base, res):
    """`id` runs as nobody, who may not write the run folder root made: the shim says so in one
    line on stderr and lets it run (docs/shim.md, "Unusable output folder"); nothing else."""
    extra = [l for l in res.stderr.splitlines() if l not in base.stderr.splitlines()]
    need(all(l.startswith(b"perfscope[") and b"cannot use the output folder" in l for l in extra),
         "%s: stderr under the shim %r" % (what, res.stderr[-400:]))


def c_setpriv():
    for i, flags in enumerate(["--clear-groups", "--init-groups --inh-caps=-all"]):
        cmd = "setpriv --reuid=65534 --regid=65534 %s id -u" % flags
        base, res = base_then_shim(cmd.split(), "out-setpriv%d" % i, lambda b: b.rc == 0 and b.stdout == b"65534\n",
                                   cmd, stderr=False)
        only_unusable_folder_line(cmd, base, res)
        what = "sh -c '%s; echo back'" % cmd
        base, res = base_then_shim(["/bin/sh", "-c", cmd + "; echo back"], "out-setpriv-sh%d" % i,
                                   lambda b: b.rc == 0 and b.stdout == b"65534\nback\n", what, stderr=False)
        only_unusable_folder_line(what, base, res)


def c_shared():
    # Where nobody can reach it: the test's own folder is private (mktemp -d).
    out = tempfile.mkdtemp(prefix="perfscope-shared-")
    os.chmod(out, 0o777)
    try:
        shared_in(out)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def shared_in(out):
    script = 'setpriv --reuid=65534 --regid=65534 --clear-groups id -u; "$0" burn'
    argv = ["/bin/sh", "-c", script, target("r_credcalls")]
    base = run(argv, plain_env(), what="sh -c setpriv id; r_credcalls burn")
    need(base.rc == 0 and base.stdout == b"65534\n" + EXPECT, "without the shim: %r" % base.stdout)
    res = run(argv, senv(out), what="sh -c setpriv id; r_credcalls burn")
    same(base, res, "sh -c setpriv id; r_credcalls burn")
    lines = samples.read_jsonl(os.path.join(out, "procs.jsonl"))
    def events_of(exe):
        pids = {r["pid"] for r in lines if r.get("event") == "start" and r.get("exe", "").endswith(exe)}
        return [(r["event"], r.get("status")) for r in lines if r.get("pid") in pids and r.get("event") != "exec"]
    ids, setxid = events_of("/id"), events_of("/r_credcalls")
    note("procs.jsonl: id %r, r_credcalls burn %r" % (ids, setxid))
    need(("exit", "ok") in ids, "procs.jsonl: no exit line for `id`, run as nobody: %r" % ids)
    need(setxid[-1:] == [("exit", "ok")], "procs.jsonl: r_credcalls burn's exit line, written as nobody: %r" % setxid)
    modes = {f: os.stat(os.path.join(out, f)).st_mode & 0o777 for f in ("procs.jsonl", "perfscope.log", ".leader")
             if os.path.exists(os.path.join(out, f))}
    need(all(m == 0o666 for m in modes.values()), "file modes in a 0777 run folder: %r" % {f: oct(m) for f, m in modes.items()})


def c_calls():
    exe = target("r_credcalls")
    for mode, runs in (("threads", 1), ("handler", 3), ("clone", 10), ("seccomp", 1), ("flip", 10), ("nested", 3)):
        for i in range(runs):
            base_then_shim([exe, mode], "out-calls-%s%d" % (mode, i), lambda b: b.rc == 0,
                           "r_credcalls %s (run %d)" % (mode, i + 1), timeout=30)


def c_link():
    out = tempfile.mkdtemp(prefix="perfscope-link-")
    victim = tempfile.NamedTemporaryFile(prefix="perfscope-victim-", delete=False)
    try:
        os.chmod(out, 0o777)
        victim.write(b"secret\n")
        victim.close()
        os.chmod(victim.name, 0o600)
        script = ('setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$0" "$1/cpuprof.$$.maps"; '
                  'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo done')
        res = run(["/bin/sh", "-c", script, victim.name, out], senv(out), what="sh with a planted link")
        need(res.rc == 0 and res.stdout == b"done\n", "sh with a planted link: %s %r %r" % (res.rc, res.stdout, res.stderr))
        st = os.stat(victim.name)
        text = open(victim.name, "rb").read()
        note("the link's target after the run: mode %o, %d bytes" % (st.st_mode & 0o777, len(text)))
        need(st.st_mode & 0o777 == 0o600 and text == b"secret\n",
             "a root file linked from the run folder was changed: mode %o, %r" % (st.st_mode & 0o777, text[:60]))
        fifos_planted_midrun()
    finally:
        shutil.rmtree(out, ignore_errors=True)
        os.unlink(victim.name)


def fifos_planted_midrun():
    """A fresh shared run (`timeout` leading, a shell its child) whose procs.jsonl and
    perfscope.log become FIFOs 0.3 s in, before the shell's child starts and everything ends:
    the run must end (`timeout` hung for good at its exit line, and ignored SIGTERM)."""
    out = tempfile.mkdtemp(prefix="perfscope-fifo-")
    try:
        os.chmod(out, 0o777)
        p = subprocess.Popen(["timeout", "15", "/bin/sh", "-c", "sleep 0.6; /bin/echo child-ran; true"], env=senv(out),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.3)
        for f in ("procs.jsonl", "perfscope.log"):
            path = os.path.join(out, f)
            if os.path.exists(path):
                os.unlink(path)
            os.mkfifo(path, 0o666)
        try:
            so, _ = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise CaseFail("a run whose procs.jsonl and perfscope.log became FIFOs hung (killed after 20 s)")
        need(p.returncode == 0 and so == b"child-ran\n", "FIFOs planted: %s %r" % (p.returncode, so))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def c_repeat():
    cmd = "setpriv --reuid=65534 --regid=65534 --clear-groups id -u".split()
    for i in range(40):
        res = run(cmd, senv("out-repeat%d" % i), what="setpriv (run %d)" % (i + 1))
        need(res.rc == 0 and res.stdout == b"65534\n", "setpriv run %d of 40: %s, %r" % (i + 1, sig_name(res.rc), res.stdout))
        shutil.rmtree("out-repeat%d" % i, ignore_errors=True)


CASES = [(1, "setxid", c_setxid),
         (2, "setpriv", c_setpriv),
         (3, "shared", c_shared),
         (4, "calls", c_calls),
         (5, "link", c_link),
         (6, "repeat", c_repeat)]
run_cases(CASES, sys.argv[1:])
PYEOF
