"""bench/yield_load.py: where the samples of a known-CPU target go on a loaded machine (issue 8,
defect 14; standard library only). Not part of `make bench`'s pairs, and never a test: it reports.

    python3 bench/yield_load.py [--shim build/libperfscope.so] [--reps 3] [--load 6] [--seconds 2]

Builds bench/yield_target.c (two threads, each SECONDS of its own CPU time in one function, each
reporting its CPU clock and getrusage(RUSAGE_THREAD) user and system time), runs it under the shim
at 997 Hz (perf clock), alternately on the machine as it is ("as is") and with LOAD extra busy
processes beside it ("loaded"), and splits the run's yield (make bench's: distinct samples / (the
child's user+sys CPU s x 997), the figure of the issue) into where the expected samples went:
  - other threads: CPU of the main thread and of the shim's own threads (writer, watcher), in the
    child's CPU but never sampled;
  - workers' system time: the perf clock counts user time only (docs/shim.md), so the kernel time
    the scheduler charges a thread (context switches, the timer interrupts, signal delivery) has
    no sample by design;
  - dropped and orphan samples (a full ring, a thread without a buffer);
  - the clock itself: workers' samples against their own user time x 997 (what is left: start and
    end of each thread, signals merged while one was pending).
"""
import argparse
import glob
import json
import os
import re
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HZ = 997


def build(build_dir):
    exe = os.path.join(build_dir, "yield_target")
    src = os.path.join(HERE, "yield_target.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(build_dir, exist_ok=True)
        subprocess.run(["gcc", "-std=gnu11", "-O2", "-g", "-fno-omit-frame-pointer", "-pthread", "-Wall",
                        "-o", exe, src], check=True)
    return exe


def samples_by_tid(out):
    """{tid: [times]} from every cpuprof.*.bin, and the headers' dropped total."""
    by, dropped = {}, 0
    for path in glob.glob(os.path.join(out, "cpuprof.*.bin")):
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 40:
            continue
        _, count, drop, max_frames, _ = struct.unpack_from("<QQQQQ", data, 0)
        dropped += drop
        size = 32 + 8 * max_frames
        for i in range(min(count, (len(data) - 40) // size)):
            t, tid = struct.unpack_from("<QI", data, 40 + i * size)
            by.setdefault(tid, []).append(t)
    return by, dropped


def one_run(exe, shim, seconds, work):
    out = os.path.join(work, "out")
    subprocess.run(["rm", "-rf", out])
    threads_file = os.path.join(work, "threads.txt")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFSCOPE_", "LLMPERFSCOPE_"))}
    env.update(LD_PRELOAD=shim, PERFSCOPE_OUT=out, PERFSCOPE_HZ=str(HZ), PERFSCOPE_CLOCK="perf")
    p = subprocess.Popen([exe, str(seconds), threads_file], env=env)
    _, status, ru = os.wait4(p.pid, 0)
    threads, profiler_cpu = [], 0.0
    with open(threads_file) as f:
        for line in f:
            if line.startswith("task "):
                profiler_cpu += int(line.split()[2]) / 1e9
                continue
            v = [int(x) for x in line.split()]
            threads.append(dict(tid=v[0], start=v[1], end=v[2], cpu=v[3] / 1e9, user=v[4] / 1e9, sys=v[5] / 1e9,
                                nvcsw=v[6], nivcsw=v[7]))
    by, dropped = samples_by_tid(out)
    orphans = 0
    try:
        m = re.search(r"(\d+) samples arrived on threads without a buffer", open(os.path.join(out, "perfscope.log")).read())
        orphans = int(m.group(1)) if m else 0
    except OSError:
        pass
    return dict(user=ru.ru_utime, sys=ru.ru_stime, threads=threads, by=by, dropped=dropped, orphans=orphans,
                profiler_cpu=profiler_cpu,
                rc=os.waitstatus_to_exitcode(status), load=os.getloadavg()[0])


def split(r):
    """The expected samples (child CPU x HZ) split into where they went, in % of expected."""
    cpu = r["user"] + r["sys"]
    expected = cpu * HZ
    workers = r["threads"][:-1]  # the last line is main's
    got = sum(len(r["by"].get(t["tid"], [])) for t in r["threads"])
    w_user = sum(t["user"] for t in workers)
    w_sys = sum(t["sys"] for t in workers)
    w_cpu = sum(t["cpu"] for t in workers)
    w_got = sum(len(r["by"].get(t["tid"], [])) for t in workers)
    main_cpu = r["threads"][-1]["cpu"]
    other_cpu = cpu - w_cpu - main_cpu - r["profiler_cpu"]  # exit path after main's line, rounding
    pct = lambda s: 100.0 * s / expected if expected else 0.0
    return dict(
        yield_=pct(got),
        main=pct(main_cpu * HZ),
        prof=pct(r["profiler_cpu"] * HZ),
        other=pct(other_cpu * HZ),
        wyield=100.0 * w_got / (w_cpu * HZ) if w_cpu else 0.0,
        wsys=pct(w_sys * HZ),
        lost=pct(r["dropped"] + r["orphans"]),
        clock=pct(w_user * HZ - w_got),
        clock_rel=100.0 * w_got / (w_user * HZ) if w_user else 0.0,
        wsys_share=100.0 * w_sys / w_cpu if w_cpu else 0.0,
        nivcsw=sum(t["nivcsw"] for t in workers),
        first_ms=max((min(r["by"].get(t["tid"], [t["start"]])) - t["start"]) / 1e6 for t in workers),
        last_ms=max((t["end"] - max(r["by"].get(t["tid"], [t["end"]]))) / 1e6 for t in workers),
        load=r["load"], cpu=cpu,
        wall=(r["threads"][-1]["end"] - r["threads"][-1]["start"]) / 1e9,
        prof_ms=1e3 * r["profiler_cpu"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", default=os.path.join(ROOT, "build", "libperfscope.so"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--load", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    exe = build(a.build)
    work = os.path.join(a.build, "yield")
    os.makedirs(work, exist_ok=True)
    rows = []
    for rep in range(a.reps):
        for arm in ("as is", "loaded"):
            spinners = []
            if arm == "loaded":
                spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.load)]
                time.sleep(1.0)
            try:
                r = one_run(exe, a.shim, a.seconds, work)
            finally:
                for s in spinners:
                    s.kill()
                    s.wait()
            rows.append((arm, split(r)))
    print("Shares of the expected samples (child's user+sys CPU s x 997):\n")
    print("| run | load | yield | main thread | shim's threads | exit path | workers' sys time (rusage) | "
          "dropped+orphan | rest | workers: samples / CPU | workers: samples / user | preempted | "
          "first sample ms | last sample ms | wall s | shim's threads ms | per wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arm, s in rows:
        print("| %s | %.1f | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %.2f%% | %d | %.2f "
              "| %.2f | %.1f | %.1f | %.2f |"
              % (arm, s["load"], s["yield_"], s["main"], s["prof"], s["other"], s["wsys"], s["lost"], s["clock"],
                 s["wyield"], s["clock_rel"], s["nivcsw"], s["first_ms"], s["last_ms"], s["wall"], s["prof_ms"],
                 s["prof_ms"] / s["wall"] if s["wall"] else 0))


if __name__ == "__main__":
    main()
