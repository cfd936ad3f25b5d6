"""perfscope_markers.py: phase markers from Python (docs/record.md), standard library
only. It must never raise into the caller's program because perfscope is absent, and never
write a line in more than one os.write.

    import perfscope_markers as pm
    pm.mark("load", "begin")
    with pm.phase("prefill", tokens=512):
        ...

The markers file is $LLMPERFSCOPE_MARKERS, else $PERFSCOPE_MARKERS (the same variable; the
first wins when both are set), as `perfscope record` sets it; neither set: every call is a
no-op. t= is time.monotonic_ns(), the CLOCK_MONOTONIC the shim's run is on. Each line is one
os.write on a descriptor opened with O_APPEND, so lines from many processes never interleave.
"""
import contextlib
import os
import re
import time

__all__ = ["mark", "phase", "markers_path"]

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")
_VALUE = re.compile(r"[^\x00-\x20\x7f]+\Z")
_fd = None
_fd_path = None


def markers_path():
    """The markers file named by the environment, or None."""
    return os.environ.get("LLMPERFSCOPE_MARKERS") or os.environ.get("PERFSCOPE_MARKERS") or None


def _line(name, event, t, attrs):
    if not _NAME.match(str(name)):
        raise ValueError("perfscope_markers: bad phase name %r: [A-Za-z0-9_.-], 1 to 64 bytes" % (name,))
    if event not in ("begin", "end"):
        raise ValueError("perfscope_markers: event %r is not begin or end" % (event,))
    words = [str(name), event]
    for k, v in attrs.items():
        if v is None:
            continue
        v = str(v)
        if not _NAME.match(k) or k == "t" or not _VALUE.match(v):
            raise ValueError("perfscope_markers: bad attribute %s=%r" % (k, v))
        words.append("%s=%s" % (k, v))
    words.append("t=%d" % t)
    return (" ".join(words) + "\n").encode()


def mark(name, event, **attrs):
    """Appends `name begin|end [key=value...] t=<monotonic ns>` to the markers file; a no-op when
    no markers file is named. A bad name or attribute raises ValueError."""
    global _fd, _fd_path
    t = time.monotonic_ns()
    path = markers_path()
    if path is None:
        return
    data = _line(name, event, t, attrs)
    if _fd is None or _fd_path != path:
        if _fd is not None:
            os.close(_fd)
            _fd = None
        _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        _fd_path = path
    os.write(_fd, data)


@contextlib.contextmanager
def phase(name, tokens=None, **attrs):
    """A phase around a `with` block: begin on entry, end (with tokens= when given) on exit, also
    when the block raises."""
    mark(name, "begin", **attrs)
    try:
        yield
    finally:
        mark(name, "end", tokens=tokens, **attrs)
