#!/usr/bin/env bash
# t_shim_sigkill: a run killed with SIGKILL 1.5 s in keeps all but its last quarter second.
# t_spin burns CPU on two threads at 997 Hz (199 where perf events are refused); SIGKILL at 1.5 s.
# - cpuprof.<pid>.bin reads (ours and the reference reader's logic, tolerating a cut record; a
#   copy cut mid-record reads up to its last whole record);
# - its samples span at least 1.1 s of wall time (last sample time minus first), from both threads,
#   each keeping samples for all but 0.3 s of its CPU time at the kill (read from /proc);
# - meta.json parses and its status reads "running".
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_spin
hz=199
if perf_events_allowed; then hz=997; fi

python3 - "$hz" <<'EOF2'
import collections, os, signal, subprocess, sys, time
import samples
from shimlib import *

hz = int(sys.argv[1])
t0 = time.monotonic()
p = subprocess.Popen([target("t_spin"), "20"], env=shim_env("out", HZ=hz), stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
time.sleep(max(0.0, 1.5 - (time.monotonic() - t0)))
# each thread's CPU time just before the kill (utime + stime, in clock ticks)
tick = os.sysconf("SC_CLK_TCK")
cpu_at_kill = {}
for task in os.listdir("/proc/%d/task" % p.pid):
    try:
        stat = open("/proc/%d/task/%s/stat" % (p.pid, task)).read()
        fields = stat.rsplit(")", 1)[1].split()
        cpu_at_kill[int(task)] = (int(fields[11]) + int(fields[12])) / tick
    except OSError:
        pass
p.send_signal(signal.SIGKILL)
out, err = p.communicate(timeout=30)
check(p.returncode == -signal.SIGKILL, "t_spin ended with %s, not SIGKILL" % sig_name(p.returncode))
files = samples.bin_files("out")
require(p.pid in files, "no cpuprof.%d.bin after SIGKILL: %s" % (p.pid, sorted(os.listdir("out"))))
stem = files[p.pid][0][1]
sf = samples.read_samples(stem + ".bin")
n_ref = samples.check_reference_reader(stem + ".bin")
allrec = samples.read_samples(stem + ".bin", beyond_count=True)
info("header count %d, %d whole records in the file (%d stray bytes), reference reader %d, dropped %d"
     % (sf.count, sf.records_in_file, sf.partial_tail, n_ref, sf.dropped))
require(sf.samples, "no samples in %s.bin" % stem)
ts = [s.t for s in sf.samples]
span = (max(ts) - min(ts)) / 1e9
tids = collections.Counter(s.tid for s in sf.samples)
info("samples span %.3f s, per thread %s" % (span, dict(tids)))
check(span >= 1.1, "the samples kept span %.3f s of the 1.5 s run (want >= 1.1 s)" % span)
check(len(tids) >= 2 and min(tids.values()) >= 0.25 * len(sf.samples),
      "samples from both threads expected, got %s" % dict(tids))
# each thread keeps all but its last quarter second: at least 90% of (its CPU time at the kill
# minus 0.3 s) x rate
for tid, n in tids.items():
    cpu = cpu_at_kill.get(tid)
    require(cpu is not None, "samples of thread %d, which was not in the process at the kill (%s)" % (tid, sorted(cpu_at_kill)))
    info("thread %d: %.2f s of CPU at the kill, %d samples kept" % (tid, cpu, n))
    check(n >= 0.9 * (cpu - 0.3) * hz, "thread %d: %d samples kept of its %.2f s of CPU at %d Hz" % (tid, n, cpu, hz))
samples.read_maps(stem + ".maps")
# A copy cut in the middle of a record (what a kill during a write leaves) still reads, with both
# readers, up to the last whole record.
data = open(stem + ".bin", "rb").read()
keep = min(sf.count, sf.records_in_file) // 2
cut = 40 + keep * sf.record_size + sf.record_size // 2
open("cut.bin", "wb").write(data[:cut])
part = samples.read_samples("cut.bin")
check(part.truncated and len(part.samples) == keep, "a file cut mid-record reads %d samples, expected %d"
      % (len(part.samples), keep))
check(samples.check_reference_reader("cut.bin") == keep, "the reference reader's logic reads the cut file differently")
meta = samples.read_meta("out/meta.json")
check(meta.get("status") == "running", "meta.json status %r after SIGKILL, expected \"running\"" % meta.get("status"))
finish()
EOF2
