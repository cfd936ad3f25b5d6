#!/usr/bin/env bash
# t_shim_stress: no deadlock, no crash, no change in output under heavy sampling.
# At PERFSCOPE_HZ=997, with PERFSCOPE_UNWIND=libunwind and =fp, each 3 times:
# - t_malloc_storm: 8 threads in malloc/calloc/realloc/free;
# - t_exceptions: 4 threads throwing C++ exceptions beside a dlopen/dlclose loop (the case where
#   unwinding in the handler deadlocks in the loader's lock).
# Each run must end within 60 s (longer = deadlock), exit 0, with stdout and stderr byte-identical
# to the run without the shim, meta.json status "ok", and samples in its file (at least half of
# user CPU time x 997: the shim did sample); the "# t=" times of its maps file never decrease
# (before the fix a pass after a dlclose stamped its snapshot with the previous pass's time,
# before the dlclose wrapper's own, and the reader put the newer mappings in force first).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_malloc_storm
build_target t_exceptions
build_lib libburn

python3 - <<'EOF2'
import os, resource
import samples
from shimlib import *

HZ = 997
cases = {
    "malloc": [target("t_malloc_storm")],
    "exceptions": [target("t_exceptions"), target("libburn.so")],
}


def user_cpu():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime


for name, argv in cases.items():
    base = run(argv, plain_env(), timeout=60, what=name + " without the shim")
    expect_ok(base, name + " without the shim")
    for unwind in ("libunwind", "fp"):
        for i in range(3):
            label = "%s PERFSCOPE_UNWIND=%s run %d" % (name, unwind, i + 1)
            out = "out-%s-%s-%d" % (name, unwind, i)
            u0 = user_cpu()
            res = run(argv, shim_env(out, HZ=HZ, UNWIND=unwind), timeout=60, what=label)
            cpu = user_cpu() - u0
            require(res.rc == 0, "%s: %s; stderr: %r" % (label, sig_name(res.rc), res.stderr[-2000:]))
            check(res.stdout == base.stdout, "%s: stdout differs:\n%s\nwithout the shim:\n%s"
                  % (label, res.stdout.decode(errors="replace"), base.stdout.decode(errors="replace")))
            check(res.stderr == base.stderr, "%s: stderr differs: %r" % (label, res.stderr[-2000:]))
            files = samples.bin_files(out)
            require(res.pid in files, "%s: no cpuprof.%d.bin" % (label, res.pid))
            sf = samples.read_samples(files[res.pid][0][1] + ".bin")
            meta = samples.read_meta(os.path.join(out, "meta.json"))
            check(meta.get("status") == "ok", "%s: meta.json status %r" % (label, meta.get("status")))
            guarded = [v for k, v in samples.leaves(meta) if "without_libunwind" in k]
            info("%s: %.2f s user CPU, %d samples (%.0f per CPU s), %d dropped, taken without libunwind: %s"
                 % (label, cpu, len(sf.samples), len(sf.samples) / max(cpu, 1e-9), sf.dropped, guarded))
            times = [t for t, _ in samples.read_maps(files[res.pid][0][1] + ".maps")]
            back = [(a, b) for a, b in zip(times, times[1:]) if b < a]
            check(not back, "%s: of %d maps snapshots, %d are in force before the one written before them: %r"
                  % (label, len(times), len(back), back[:4]))
            check(len(sf.samples) >= 0.5 * cpu * HZ, "%s: %d samples for %.2f s of user CPU at %d Hz"
                  % (label, len(sf.samples), cpu, HZ))
finish()
EOF2
