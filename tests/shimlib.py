"""shimlib.py: running test targets with and without the shim, for the t_shim_*.sh tests (and
report_energy.py). Re-exports tests/checks.py's check, fail, require, die and finish: the tests'
one check convention (one "FAIL: ..." line per failed check, the count at the end)."""
import collections
import os
import signal
import subprocess
import sys
import time

import samples
from checks import check, die, fail, finish, require  # noqa: F401  (re-exported for the tests)

ROOT = os.environ["ROOT"]
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
SHIM = os.environ.get("SHIM", os.path.join(BUILD, "libperfscope.so"))
TBUILD = os.path.join(BUILD, "tests")


def target(name):
    return os.path.join(TBUILD, name)


def shim_env(out, **kw):
    """The environment of a run under the shim: PERFSCOPE_OUT=out, plus kw (PERFSCOPE_HZ=997 as
    HZ=997 or PERFSCOPE_HZ=997; None removes a variable). Everything else as inherited, minus any
    PERFSCOPE/LLMPERFSCOPE variable of the caller's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PERFSCOPE_", "LLMPERFSCOPE_")) and k != "LD_PRELOAD"}
    env["LD_PRELOAD"] = SHIM
    if out is not None:
        env["PERFSCOPE_OUT"] = out
    for k, v in kw.items():
        if not k.startswith(("PERFSCOPE_", "LLMPERFSCOPE_", "LD_")):
            k = "PERFSCOPE_" + k
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def plain_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PERFSCOPE_", "LLMPERFSCOPE_")) and k != "LD_PRELOAD"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


Result = collections.namedtuple("Result", "rc stdout stderr pid t0 t1")


def run(argv, env, timeout=60, stdin=None, what=None):
    """Run to completion; a run past `timeout` is killed and fails the test (a hang is a deadlock)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        die("%s: still running after %d s (deadlock?): %s" % (what or argv[0], timeout, " ".join(argv)))
    return Result(p.returncode, out, err, p.pid, t0, time.monotonic_ns())


def expect_ok(res, what):
    """A check that the run exited 0; the checker stops when it did not."""
    require(res.rc == 0, "%s: exit status %s, stderr:\n%s" % (what, res.rc, res.stderr.decode("utf-8", "replace")[-3000:]))


def sig_name(rc):
    return signal.Signals(-rc).name if rc < 0 else "exit %d" % rc


def load_json_lines(path):
    return samples.read_jsonl(path)


def within(got, expected, rel, absolute=0.0):
    return abs(got - expected) <= max(rel * expected, absolute)


def info(msg):
    print("# " + msg)
    sys.stdout.flush()
