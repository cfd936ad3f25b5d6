#!/usr/bin/env python3
"""drive.py: marks an engine's phases from outside, through the markers file (docs/formats.md), the way
a serving script or benchmark harness would: the engine itself is not changed (toy-engine runs
with --no-api).

It writes "idle begin"/"idle end" around a quiet sleep (the baseline for energy), then for each
request "request begin", runs the engine with --progress, turns its stderr lines
"stage <name> begin|end t=<ns> [tokens=N]" into marker lines with the engine's own
CLOCK_MONOTONIC stamp, and "request end" when the engine exits.

Each marker line is written with a single os.write on an O_APPEND descriptor, so lines from
several writers never interleave. It must never change what the engine prints on stdout or the
exit status it returns. Standard library only.

    LLMPERFSCOPE_MARKERS=out/markers examples/drive.py [--engine build/toy-engine]
        [--idle 0.5] [--requests 1] [-- ENGINE ARGS...]
"""

import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGE = re.compile(r"^stage ([A-Za-z0-9_.-]{1,64}) (begin|end) t=(\d+)(?: tokens=(\d+))?$")


class Markers:
    """Appends marker lines to the markers file, one os.write each."""

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def mark(self, name, event, t_ns=None, **attrs):
        t_ns = time.monotonic_ns() if t_ns is None else t_ns
        fields = [name, event, f"t={t_ns}"] + [f"{k}={v}" for k, v in attrs.items()]
        line = (" ".join(fields) + "\n").encode()
        if os.write(self.fd, line) != len(line):
            raise OSError(f"{self.path}: short write of a marker line")

    def close(self):
        os.close(self.fd)


def run_request(markers, engine, engine_args, request):
    """Runs the engine once, marking its stages from its progress lines; returns its status."""
    markers.mark("request", "begin", id=request)
    child = subprocess.Popen([engine, "--no-api", "--progress", *engine_args],
                             stderr=subprocess.PIPE, text=True, errors="replace")
    for line in child.stderr:
        m = STAGE.match(line.rstrip("\n"))
        if not m:
            sys.stderr.write(line)  # the engine's own messages pass through
            continue
        name, event, t_ns, tokens = m.groups()
        attrs = {"tokens": tokens} if tokens is not None else {}
        markers.mark(name, event, int(t_ns), **attrs)
    status = child.wait()
    markers.mark("request", "end", id=request)
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", default=os.path.join(ROOT, "build", "toy-engine"))
    parser.add_argument("--markers", default=os.environ.get("LLMPERFSCOPE_MARKERS"),
                        help="markers file (default: $LLMPERFSCOPE_MARKERS)")
    parser.add_argument("--idle", type=float, default=0.5, help="seconds of idle baseline first")
    parser.add_argument("--requests", type=int, default=1, help="engine runs, one after another")
    parser.add_argument("engine_args", nargs="*", help="after --: passed to the engine")
    args = parser.parse_args()
    if not args.markers:
        print("drive.py: no markers file: set LLMPERFSCOPE_MARKERS or pass --markers", file=sys.stderr)
        return 2
    if not os.access(args.engine, os.X_OK):
        print(f"drive.py: {args.engine}: not an executable (run make)", file=sys.stderr)
        return 2
    try:
        markers = Markers(args.markers)
    except OSError as e:
        print(f"drive.py: {args.markers}: {e.strerror}", file=sys.stderr)
        return 2
    if args.idle > 0:
        markers.mark("idle", "begin")
        time.sleep(args.idle)
        markers.mark("idle", "end")
    status = 0
    for request in range(args.requests):
        status = run_request(markers, args.engine, args.engine_args, request)
        if status != 0:
            break
    markers.close()
    # A child killed by a signal reads as 128 + signal, as a shell would say it.
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
