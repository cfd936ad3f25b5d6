"""bench/timeit.py: one command's wall and CPU seconds, to the microsecond (standard library
only). GNU time prints both to the hundredth of a second, which is a quarter of what the
symbolizer takes on the 200k-sample file bench/symbolize.sh compares against the reference
reader: its ratio moved by 4x per tick (17.2x at 0.04 s, 23x at 0.03). Here the wall time is
taken around the child alone (time.perf_counter, after this interpreter's own start) and the CPU
time is the child's user + system from wait4. Prints "wall cpu"; exits with the child's status.

usage: python3 bench/timeit.py COMMAND [ARG...]
"""
import os
import sys
import time


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execvp(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    print("%.4f %.4f" % (wall, ru.ru_utime + ru.ru_stime))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
