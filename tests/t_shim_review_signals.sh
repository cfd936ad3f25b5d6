#!/usr/bin/env bash
# t_shim_review_signals: regressions from a review of the shim (docs/shim.md: the shim never changes
# the target's behaviour, output, exit status, errno, signals or descriptors), signals and their
# dispositions. Each case runs its r_* target without and with the shim (PERFSCOPE_HZ=997) and
# compares (harness: tests/reviewlib.py); cases numbered as in the review:
#  3 sigwait      all signals blocked, a burning worker, sigwait(): returns SIGTERM, never SIGPROF
#  5 alias        sigaction(sig, &sa, &sa) installs the new handler (SIGUSR1 and SIGPROF)
#  6 profreset    the target's SIGPROF handler (own ITIMER_PROF) with SA_RESETHAND and sa_mask:
#                 mask applied, reset after one delivery, the next tick kills by SIGPROF
# 11 altstack     8 KiB alternate signal stack + SIGTERM: dies by SIGTERM, not SIGSEGV
# 12 vfork        a vfork child's signal(SIGPROF, SIG_DFL) does not change the parent
# 15 sigapi       sigset, sigignore, siginterrupt (the C library's internal sigaction), signal()'s
#                 flags and SIG_ERR, and what sigaction queries read back (flags, trampoline,
#                 mask): the same lines and the same death by SIGTERM (a second review: every
#                 line differed, and the target's SIGPROF handler ran 325 times at 997 Hz)
# 16 execmalloc   an exec from a handler that interrupted malloc: the shim's way out allocates
#                 nothing on that thread (the target's own malloc says so if it is entered again;
#                 before: the exec's maps snapshot, then its unsampled lines, hung such a thread)
# 17 profign      a program that ignores SIGPROF: its posix_spawn, fork + exec and system()
#                 children find SIGPROF ignored and survive one (before: the kernel held the
#                 shim's handler, which exec resets to SIG_DFL, and each child died of it)
# 18 faultinfo   a traced copy's fatal SIGSEGV (a write to 0x1001) and SIGTERM (sent by its
#                 tracer) as a core dump or a debugger sees them: the fault's si_code and address,
#                 the sender's si_code and pid (before: the SIG_DFL stand-in sent the signal again
#                 by tgkill, code SI_TKILL and the process's own pid; a transparency review)
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review_signals.sh 3`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_sigwait r_alias r_profreset r_altstk r_vfork r_sigapi r_execmalloc r_profign r_faultinfo; do
    build_target "$t"
done

python3 - "$@" <<'EOF'
import os, select, signal, subprocess, time
import sys
from reviewlib import *
from shimlib import target, plain_env, sig_name, Result


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


def c_alias():
    exe = target("r_alias")
    base = run([exe], plain_env(), what="r_alias")
    need(base.rc == 0, "r_alias without the shim: %s" % sig_name(base.rc))
    res = run([exe], senv("out-alias"), what="r_alias")
    same(base, res, "r_alias (sigaction(sig, &sa, &sa))")


def c_sigapi():
    base_then_shim([target("r_sigapi")], "out-sigapi",
                   lambda b: b.rc == -signal.SIGTERM and b"h ran 0 times" in b.stdout
                   and b"read with a 0.1 s timer: -1 (Interrupted system call)" in b.stdout, "r_sigapi")


def c_execmalloc():
    base_then_shim([target("r_execmalloc")], "out-execmalloc",
                   lambda b: b.rc == 0 and b.stdout == b"exec from the handler ran\n", "r_execmalloc")


def c_profign():
    base_then_shim([target("r_profign")], "out-profign",
                   lambda b: b.rc == 0 and b.stdout.count(b"SIGPROF SIG_IGN, survived a SIGPROF") == 3, "r_profign")


def c_profreset():
    exe = target("r_profreset")
    base = run([exe], plain_env(), what="r_profreset")
    want = b"handler ran 1 time(s); SIGUSR1 blocked in the handler: yes; disposition after: SIG_DFL\n"
    need(base.rc == -signal.SIGPROF and base.stdout == want,
         "r_profreset without the shim: %s, %r" % (sig_name(base.rc), base.stdout))
    for clock in ("auto", "timer"):
        res = run([exe], senv("out-profreset-%s" % clock, CLOCK=clock), what="r_profreset")
        same(base, res, "r_profreset PERFSCOPE_CLOCK=%s (SA_RESETHAND, sa_mask, own ITIMER_PROF)" % clock)


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


def c_faultinfo():
    exe = target("r_faultinfo")
    for mode, want in (("segv", b"SIGSEGV code 1 addr 0x1001 (from the fault); killed by SIGSEGV\n"),
                       ("term", b"SIGTERM code 0 (from the tracer); killed by SIGTERM\n")):
        base = run([exe, mode], plain_env(), what="r_faultinfo " + mode)
        if b"never delivered" in base.stdout:
            note("ptrace refused here (%r): case not run" % base.stdout)
            return
        need(base.rc == 0 and base.stdout == want, "r_faultinfo %s without the shim: %s, %r" % (mode, sig_name(base.rc), base.stdout))
        res = run([exe, mode], senv("out-faultinfo-" + mode), what="r_faultinfo " + mode)
        same(base, res, "r_faultinfo %s (the siginfo of the signal that ends the traced copy)" % mode)


CASES = [(3, "sigwait", c_sigwait),
         (5, "alias", c_alias),
         (6, "profreset", c_profreset),
         (11, "altstack", c_altstack),
         (12, "vfork", c_vfork),
         (15, "sigapi", c_sigapi),
         (16, "execmalloc", c_execmalloc),
         (17, "profign", c_profign),
         (18, "faultinfo", c_faultinfo)]
run_cases(CASES, sys.argv[1:])
EOF
