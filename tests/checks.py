"""checks.py: the one check convention of the tests' Python checkers (tests/*.py and the Python
inside tests/t_*.sh); the shell tests' side of it is tests/lib.sh (fail, bad, checks_done).

    from checks import check, fail, require, die, finish

- check(cond, msg): counts one check; when cond is false, prints the one line "FAIL: msg" and
  goes on (the other checks still run). Returns bool(cond), so a caller can skip what needs it.
- fail(msg): a check that failed: check(False, msg).
- require(cond, msg): a check that what follows needs: when it fails, the FAIL line, then the
  count, and exit 1 at once.
- die(msg): require(False, msg).
- finish(): the count, "all N checks passed" or "K of N checks failed", then exit 0 or 1.

Every line goes to stdout, flushed, so it stays in order with the checker's "# ..." notes.
A checker that ends some other way (the end of the script, sys.exit(), a skip with 77) still
exits 1 when a check failed, with the count printed; an uncaught exception is a failed check of
its own (its traceback, then "FAIL: Type: message"). With no failure and no finish(), nothing is
added (a skip's reason stays the last line).

`prefix` (a module variable, "" by default) goes before every message: a shell test that runs
several checkers names each one's lines with it.
"""
import atexit
import os
import sys
import threading
import traceback

prefix = ""
_checks = 0
_failed = []
_counted = None        # (failed, checks) when the count was last printed
_lock = threading.Lock()  # checks from worker threads (judge_check.py's pool) count once each


def _out(line):
    sys.stderr.flush()
    print(line, flush=True)


def check(cond, msg):
    global _checks
    with _lock:
        _checks += 1
        if not cond:
            _failed.append(prefix + msg)
            _out("FAIL: " + prefix + msg)
    return bool(cond)


def fail(msg):
    return check(False, msg)


def _count():
    if _failed:
        return "%s%d of %d checks failed" % (prefix, len(_failed), _checks)
    return "%sall %d checks passed" % (prefix, _checks)


def _print_count():
    global _counted
    _counted = (len(_failed), _checks)
    _out(_count())


def finish():
    _print_count()
    sys.exit(1 if _failed else 0)


def require(cond, msg):
    if not check(cond, msg):
        finish()
    return True


def die(msg):
    require(False, msg)


def failures():
    """The messages of the checks failed so far."""
    return list(_failed)


def _excepthook(tp, value, tb):
    traceback.print_exception(tp, value, tb)
    fail("%s: %s" % (tp.__name__, value))


def _at_exit():
    if _failed:
        if _counted != (len(_failed), _checks):
            _print_count()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


sys.excepthook = _excepthook
atexit.register(_at_exit)
