#!/usr/bin/env bash
# t_shim_kchain: PERFSCOPE_UNWIND=kernel, the kernel's call chains with no signal (docs/shim.md,
# "Kernel call chains"). Skips where perf events are refused. At 997 Hz:
# - k_threads 4 x 0.3 s: each worker's samples within 80-110% of its CPU s x 997 (its first
#   sample comes after a whole period, 1 ms of 300), nearly all of them with burn_worker
#   innermost and worker, start_thread outward (the kernel's frame-pointer walk), meta.json says
#   unwind kernel and perf_delivery callchain, and the sample file holds every sample meta.json
#   counts;
# - m_blockall raw: workers that block SIGPROF with a raw rt_sigprocmask are sampled all the same
#   (no signal is involved), and nothing is counted unsampled; nor for k_blockshort's 300 short
#   threads that do the same at 99 Hz (3 runs), whose ends fall between the writer's checks;
# - r_shortthreads, 300 threads of 4 ms two at a time: the samples of threads that ended are in
#   the file (50-105% of CPU s x 997: the first millisecond of each is never sampled);
# - a shell that runs /bin/true 50 times, then counts to 200000: every process's exit line in
#   procs.jsonl, the shell's own loop sampled, and no empty sample file (a process that takes no
#   sample makes none, as under the defaults);
# - no room for the buffers: as root without CAP_IPC_LOCK (dropped from the bounding set) and
#   with RLIMIT_MEMLOCK 0, 24 workers alive at once outgrow kernel.perf_event_mlock_kb: one line
#   in perfscope.log says so, the threads refused fall back to the tick timer, and every worker is
#   still sampled (its samples, weighted, at least 60% of CPU s x 997); at 4999 Hz, where a
#   whole buffer is 516 KiB, a thread refused it takes a smaller one, so at least 8 of the 24
#   still get the kernel's chains.
# No timed assertion: the bounds are on samples against each thread's own CPU time.
set -u
. "$ROOT/tests/lib.sh"
need_shim
perf_events_allowed || skip "perf events are refused here (perf_event_paranoid, seccomp): no kernel call chains"
build_target k_threads
build_target m_blockall
build_target k_blockshort
build_target r_shortthreads
nocap=0
if [ "$(id -u)" = 0 ] && setpriv --bounding-set -ipc_lock true 2>/dev/null; then nocap=1; else
  note "not root or no setpriv: the case without room for the buffers is skipped"; fi

py_check kchain - "$nocap" <<'EOF'
import collections, glob, json, os, subprocess, sys
import samples
from shimlib import *

nocap = sys.argv[1] == "1"
HZ = 997


def by_tid(out):
    """{tid: [frames of each record]} over every sample file of the run."""
    n = collections.defaultdict(list)
    for path in glob.glob(os.path.join(out, "cpuprof.*.bin")):
        for s in samples.read_samples(path).samples:
            n[s.tid].append(s.frames)
    return n


def cpu_of(path):
    with open(path) as f:
        return {int(t): int(ns) / 1e9 for t, ns in (line.split() for line in f if line.strip())}


def meta(out):
    return json.load(open(os.path.join(out, "meta.json")))["sampling"]


# ---- worker threads: rate, stacks, what meta.json says -------------------------------------
exe = target("k_threads")
syms = samples.symbols(exe)
out = "out-threads"
res = run([exe, "4", "0.3", "cpu-threads.txt"], shim_env(out, HZ=HZ, UNWIND="kernel"), what="k_threads")
expect_ok(res, "k_threads")
got, cpu = by_tid(out), cpu_of("cpu-threads.txt")
check(len(cpu) == 4, "k_threads: 4 workers reported their CPU: %r" % cpu)
maps = open(glob.glob(os.path.join(out, "cpuprof.*.maps"))[0]).read()
base = None
for line in maps.splitlines():
    f = line.split()
    if len(f) >= 6 and f[5] == os.path.realpath(exe) and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16)
require(base is not None, "k_threads: its own mapping in the maps file:\n%s" % maps[:2000])
ranges = sorted((base + v, base + v + size, name) for name, (v, size) in syms.items() if size)  # a PIE


def name_of(addr):
    for a, b, name in ranges:
        if a <= addr < b:
            return name
    return None


for tid, s in sorted(cpu.items()):
    frames = got.get(tid, [])
    expected = s * HZ
    leaf = sum(1 for f in frames if f and name_of(f[0]) == "burn_worker" and
               [name_of(a - 1) for a in f[1:2]] == ["worker"])
    info("worker %d: %d samples for %.3f CPU s (%.0f expected), %d in burn_worker <- worker" % (
        tid, len(frames), s, expected, leaf))
    check(0.8 * expected <= len(frames) <= 1.1 * expected,
          "k_threads: worker %d: %d samples for %.3f CPU s at %d Hz" % (tid, len(frames), s, HZ))
    check(leaf >= 0.9 * len(frames), "k_threads: worker %d: %d of %d samples read burn_worker <- worker; e.g. %r" % (
        tid, leaf, len(frames), [[name_of(a) for a in f[:4]] for f in frames[:3]]))
m = meta(out)
check(m.get("unwind") == "kernel" and m.get("perf_delivery") == "callchain",
      "k_threads: meta.json sampling: unwind %r, perf_delivery %r" % (m.get("unwind"), m.get("perf_delivery")))
in_files = sum(len(v) for v in got.values())
check(m.get("samples") == in_files and m.get("samples_without_libunwind") == 0,
      "k_threads: meta.json counts %r samples (%r without libunwind), the files hold %d" % (
          m.get("samples"), m.get("samples_without_libunwind"), in_files))
log = open(os.path.join(out, "perfscope.log")).read() if os.path.exists(os.path.join(out, "perfscope.log")) else ""
check("refused" not in log and "call-chain" not in log, "k_threads: nothing refused: %s" % log)

# ---- threads that block SIGPROF: no signal, so sampled all the same --------------------------
out = "out-blockall"
res = run([target("m_blockall"), "raw", "0.3", "cpu-blockall.txt"], shim_env(out, HZ=HZ, UNWIND="kernel"),
          what="m_blockall raw")
expect_ok(res, "m_blockall raw")
got, cpu = by_tid(out), cpu_of("cpu-blockall.txt")
for tid, s in sorted(cpu.items()):
    info("m_blockall raw: worker %d: %d samples for %.3f CPU s" % (tid, len(got.get(tid, [])), s))
    check(len(got.get(tid, [])) >= 0.8 * s * HZ, "m_blockall raw: worker %d with SIGPROF blocked: %d samples for "
          "%.3f CPU s" % (tid, len(got.get(tid, [])), s))
check(meta(out).get("unsampled_cpu_s") == 0, "m_blockall raw: unsampled_cpu_s %r" % meta(out).get("unsampled_cpu_s"))
# short threads that block it and end between the writer's checks: still nothing unsampled
for i in range(3):
    out = "out-blockshort-%d" % i
    res = run([target("k_blockshort"), "300", "6000"], shim_env(out, HZ=99, UNWIND="kernel"), what="k_blockshort")
    expect_ok(res, "k_blockshort")
    check(meta(out).get("unsampled_cpu_s") == 0 and not os.path.exists(os.path.join(out, "unsampled.jsonl")),
          "k_blockshort (run %d): 300 threads of 6 ms with SIGPROF blocked, unsampled_cpu_s %r" % (
              i + 1, meta(out).get("unsampled_cpu_s")))

# ---- threads that end: their last records are drained before their buffers go -----------------
out = "out-short"
res = run([target("r_shortthreads"), "300", "4000"], shim_env(out, HZ=HZ, UNWIND="kernel"), what="r_shortthreads")
expect_ok(res, "r_shortthreads")
total_s = int(res.stdout.split()[0]) / 1e9
got = by_tid(out)
short = sum(len(v) for v in got.values()) - len(got.get(res.pid, []))
info("r_shortthreads: %d samples on %d threads for %.3f CPU s (%.0f at %d Hz)" % (
    short, len(got) - (res.pid in got), total_s, total_s * HZ, HZ))
check(0.5 * total_s * HZ <= short <= 1.05 * total_s * HZ,
      "r_shortthreads: %d samples for %.3f CPU s of 300 threads of 4 ms at %d Hz" % (short, total_s, HZ))
m = meta(out)
check(m.get("samples") == sum(len(v) for v in got.values()),
      "r_shortthreads: meta.json counts %r samples, the files hold %d" % (m.get("samples"), sum(len(v) for v in got.values())))

# ---- processes: fork, exec, exit ---------------------------------------------------------
out = "out-procs"
script = "for i in $(seq 50); do /bin/true; done; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"
res = run(["/bin/sh", "-c", script], shim_env(out, HZ=HZ, UNWIND="kernel"), what="sh loop")
expect_ok(res, "sh loop")
lines = load_json_lines(os.path.join(out, "procs.jsonl"))
exits = [l for l in lines if l.get("event") == "exit"]
check(len(exits) >= 51, "sh loop: %d exit lines in procs.jsonl (50 /bin/true and the shell)" % len(exits))
sh = [l for l in exits if l.get("pid") == res.pid]
n = sh[0].get("sampling", {}).get("samples", 0) if sh else 0
info("sh loop: the shell's exit line counts %d samples" % n)
check(n >= 50, "sh loop: the shell's own loop took %d samples" % n)
empty = [os.path.basename(p) for p in glob.glob(os.path.join(out, "cpuprof.*.bin"))
         if not samples.read_samples(p).samples]
check(not empty, "sh loop: a process that took no sample leaves no sample file: %d empty (%s)" % (
    len(empty), " ".join(sorted(empty)[:4])))

# ---- no room for the buffers: the tick timer for the threads refused -------------------------
if nocap:
    out = "out-nocap"
    env = shim_env(out, HZ=HZ, UNWIND="kernel")
    res = run(["bash", "-c", 'ulimit -l 0 && exec setpriv --bounding-set -ipc_lock --inh-caps -ipc_lock "$@"', "-",
               exe, "24", "0.1", "cpu-nocap.txt"], env, what="k_threads without room")
    expect_ok(res, "k_threads 24 without CAP_IPC_LOCK")
    got, cpu = by_tid(out), cpu_of("cpu-nocap.txt")
    log = open(os.path.join(out, "perfscope.log")).read()
    check(log.count("no call-chain buffer") == 1, "without room: perfscope.log says so once: %s" % log)
    short = [(tid, len(got.get(tid, [])), s) for tid, s in cpu.items() if len(got.get(tid, [])) < 0.6 * s * HZ]
    info("without room: 24 workers, %d below 60%% of CPU s x %d" % (len(short), HZ))
    check(len(cpu) == 24 and not short, "without room: workers under-sampled (tid, samples, CPU s): %r" % short[:5])
    # at 4999 Hz the buffers are sized for the rate (516 KiB): a thread refused that much takes a
    # smaller one before the timer, so as many threads get the kernel's chains as at 997 Hz (a
    # thread on the timer shows at most a tick's rate of distinct sample times)
    out = "out-nocap-5k"
    res = run(["bash", "-c", 'ulimit -l 0 && exec setpriv --bounding-set -ipc_lock --inh-caps -ipc_lock "$@"', "-",
               exe, "24", "0.1", "cpu-nocap-5k.txt"], shim_env(out, HZ=4999, UNWIND="kernel"),
              what="k_threads at 4999 Hz without room")
    expect_ok(res, "k_threads 24 at 4999 Hz without CAP_IPC_LOCK")
    times = collections.defaultdict(set)
    for path in glob.glob(os.path.join(out, "cpuprof.*.bin")):
        for s in samples.read_samples(path).samples:
            times[s.tid].add(s.t)
    cpu = cpu_of("cpu-nocap-5k.txt")
    chained = sum(1 for tid, c in cpu.items() if len(times.get(tid, ())) > 1000 * c)
    info("without room at 4999 Hz: %d of 24 workers on the kernel's chains" % chained)
    check(chained >= 8, "without room at 4999 Hz: %d of 24 workers got a call-chain buffer (16 pages each fit 15 "
          "in 516 KiB x 2 CPUs)" % chained)
else:
    print("# skipped: the case without room for the buffers (needs root and setpriv)")
finish()
EOF
checks_done
