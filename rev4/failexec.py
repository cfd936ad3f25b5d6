# rev4: samples per thread before and after a failed exec, per PERFSCOPE_PERF_DELIVERY.
# usage: python3 rev4/failexec.py [SHIM]
import os, subprocess, sys
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests"))
import samples
shim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/libperfscope.so")
subprocess.run(["cc", "-O1", "-pthread", "-o", "/tmp/rev4-failexec", os.path.join(root, "rev4/r_failexec.c")], check=True)
for clock, dl in [("perf", "refresh")] * int(os.environ.get("N", "1")) if os.environ.get("N") else (("timer", "ring"), ("perf", "ring"), ("perf", "refresh")):
    out = "/tmp/rev4-fe-%s-%s" % (clock, dl); subprocess.run(["rm", "-rf", out])
    env = dict(os.environ, LD_PRELOAD=shim, PERFSCOPE_OUT=out, PERFSCOPE_HZ="997",
               PERFSCOPE_CLOCK=clock, PERFSCOPE_PERF_DELIVERY=dl)
    r = subprocess.run(["/tmp/rev4-failexec"], env=env, capture_output=True)
    t0 = int(r.stdout.split()[0]); files = samples.bin_files(out)
    pid = sorted(files)[0]
    ss = []
    for f in files[pid]:
        ss += samples.read_samples(f[1] + ".bin").samples
    per = {}
    for s in ss:
        b, a = per.get(s.tid, (0, 0)); per[s.tid] = (b + (s.t < t0), a + (s.t >= t0))
    print("%s/%s rc=%d  per thread (before, after the failed exec): %s" % (clock, dl, r.returncode, sorted(per.values())))
