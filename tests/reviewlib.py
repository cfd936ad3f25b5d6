"""reviewlib.py: the harness of the shim review's regression cases (tests/t_shim_review_*.sh; the
review numbered its cases 1 to 14, each file runs those of one concern).

A case is a function that runs its r_* target (tests/targets/r_*.c) without the shim and with it
(PERFSCOPE_HZ=997) and compares; need() ends the case at its first failed condition. run_cases()
runs a file's cases (or those named on its command line, by number or name): one "PASS case N
name" line per case that passed, one tests/checks.py "FAIL: case N name ..." line per case that
failed, and the count at the end.
"""
import os
import subprocess
import sys
import time

import samples
from checks import check, finish
from shimlib import Result, plain_env, shim_env, sig_name

HZ = 997
# The rate the sample-count checks assume: 997 Hz needs perf events; without them the shim falls
# back to the tick timer, whose rate is the kernel's (100 Hz at the least). The test sets
# REVIEW_PERF=1 where perf events are allowed (lib.sh perf_events_allowed).
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


def base_then_shim(argv, out, base_ok, what, timeout=30, stderr=True, **kw):
    """The usual case: argv without the shim, which must end as base_ok(base) says (else the
    case fails showing how it ended), then under the shim into `out` (senv(out, **kw)), which
    must end the same (same(); stderr=False: status and stdout). -> (base, res)."""
    base = run(argv, plain_env(), timeout=timeout, what=what)
    need(base_ok(base), "%s without the shim: %s, %r %r" % (what, sig_name(base.rc), base.stdout[-400:], base.stderr[-200:]))
    res = run(argv, senv(out, **kw), timeout=timeout, what=what)
    same(base, res, what, stderr=stderr)
    return base, res


def samples_of(out, pid):
    """(samples, dropped) in the sample files of process pid in run folder out."""
    n = dropped = 0
    for _, p in samples.bin_files(out).get(pid, []):
        s = samples.read_samples(p + ".bin")
        n += len(s.samples)
        dropped += s.dropped
    return n, dropped


def meta_of(out):
    return samples.read_meta(os.path.join(out, "meta.json"))


def note(msg):
    print("#   " + msg)
    sys.stdout.flush()


def run_cases(cases, only=()):
    """cases: [(number, name, function)]; only: numbers or names to run (all when empty).
    Each case is one check; ends with the count (exit 1 when a case failed)."""
    only = set(only)
    for i, name, fn in cases:
        if only and str(i) not in only and name not in only:
            continue
        t0 = time.monotonic()
        try:
            fn()
            ok, msg = True, ""
        except (CaseFail, SystemExit, Exception) as e:
            ok, msg = False, str(e) if isinstance(e, CaseFail) else "%s: %s" % (type(e).__name__, e)
        if check(ok, "case %d %s (%.1fs): %s" % (i, name, time.monotonic() - t0, msg)):
            print("PASS case %d %s (%.1fs)" % (i, name, time.monotonic() - t0))
        sys.stdout.flush()
    finish()
