#!/usr/bin/env bash
# t_shim_unwtls: the handler's libunwind neither allocates nor reads glibc's dtv (preload/unwlib.c).
# tests/targets/r_tlsheap.c exports malloc & co. and __tls_get_addr and counts the calls its
# threads make on their alternate signal stacks, where only the shim's handler runs. Each part
# runs at 997 Hz with libunwind (most samples walked with it) and must exit 0 within 30 s with
# both counts 0, as without the shim:
# - dtv: 40 libraries with TLS loaded, touched by two threads, every other one unloaded. With
#   __tls_get_addr called in the handler, each thread's stale dtv was brought up to date there
#   (free, realloc): heap calls counted, a deadlock or "corrupted size vs. prev_size" in some runs;
# - hang: the same over a thread in malloc's arena lock (3 runs): it hung in 4 runs of 5;
# - keys: 40 pthread keys made in main before the first samples: the fast tracer's key came
#   past the first 32, and each new thread's first walk calloced in pthread_setspecific;
# - keys made before the shim started (a library whose constructor runs first makes 40): the
#   log says the fast tracer is not used, stacks are walked step by step, nothing counted;
# - early: a program linked with libunwind that used unw_backtrace itself before the shim's
#   first use (tests/targets/r_unwearly.c): the fast tracer's key is the program's call's, low
#   as well, and the fast tracer stays in use (it was refused, the handler 10 times slower).
# - nohdr: the thread runs in a library without .eh_frame_hdr (tests/targets/r_nohdr.c; its
#   unwind information only in .debug_frame): libunwind open()ed the library's file in the handler
#   on nearly every sample (about 480 in 1 s, at the lowest free descriptor); no open now.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_tlsheap -rdynamic
build_lib r_tlsheap_lib
build_lib r_tlsheap_keys
build_target r_unwearly -Wl,--no-as-needed -lunwind
build_lib r_nohdr_lib -fno-asynchronous-unwind-tables -fno-unwind-tables -Wl,--no-eh-frame-hdr
build_target r_nohdr -rdynamic -Wl,--no-as-needed "$TBUILD/r_nohdr_lib.so" -Wl,-rpath,"$TBUILD"
mkdir -p tls
for i in $(seq 0 39); do cp "$TBUILD/r_tlsheap_lib.so" "tls/tls_$i.so"; done

python3 - <<'EOF2'
import json, os, subprocess
from shimlib import *

CLEAN = b"heap calls in the handler: 0; __tls_get_addr calls in the handler: 0\n"
keys_lib = os.path.join(TBUILD, "r_tlsheap_keys.so")
cases = [("dtv", ["dtv", "tls"], None, 1), ("hang", ["hang", "tls"], None, 3), ("keys", ["keys"], None, 1),
         ("keys before the shim", ["keys"], keys_lib, 1)]

for name, args, preload_after, runs in cases:
    argv = [target("r_tlsheap")] + args
    base = subprocess.run(argv, env=plain_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    require(base.returncode == 0 and base.stdout == CLEAN, "%s without the shim: %r" % (name, base))
    for i in range(runs):
        what = "%s under the shim (run %d)" % (name, i + 1)
        out = "out-%s-%d" % (name.replace(" ", "-"), i)
        env = shim_env(out, HZ=997, UNWIND="libunwind")
        if preload_after:
            env["LD_PRELOAD"] = SHIM + ":" + preload_after
        try:
            res = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            fail("%s: still running after 30 s (a deadlock in the handler)" % what)
            continue
        check(res.returncode == 0 and res.stdout == CLEAN, "%s: exit %s, %r %r" % (what, res.returncode,
                                                                                    res.stdout, res.stderr[-300:]))
        with open(os.path.join(out, "meta.json")) as f:
            s = json.load(f).get("sampling", {})
        taken, fp = s.get("samples") or 0, s.get("samples_without_libunwind") or 0
        check(taken > 200 and fp < taken / 2, "%s: %d samples, %d without libunwind: libunwind not in use"
              % (what, taken, fp))
        with open(os.path.join(out, "perfscope.log")) as f:
            log = f.read()
        said = "step by step" in log
        if preload_after:
            check(said and "32 pthread keys were in use" in log,
                  "%s: the log does not say the fast tracer is off: %r" % (what, log))
        else:
            check(not said, "%s: the fast tracer was refused: %r" % (what, log))

argv = [target("r_unwearly"), "1"]
base = subprocess.run(argv, env=plain_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
require(base.returncode == 0, "early without the shim: %r" % (base,))
res = subprocess.run(argv, env=shim_env("out-early", HZ=997, UNWIND="libunwind"), stdin=subprocess.DEVNULL,
                     capture_output=True, timeout=60)
check(res.returncode == 0 and res.stdout == base.stdout, "early under the shim: %r" % (res,))
with open(os.path.join("out-early", "perfscope.log")) as f:
    log = f.read()
check("step by step" not in log, "early: the fast tracer was refused: %r" % log)

argv = [target("r_nohdr")]
NOHDR_CLEAN = b"opens in the handler: 0; heap calls in the handler: 0\n"
base = subprocess.run(argv, env=plain_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
require(base.returncode == 0 and base.stdout == NOHDR_CLEAN, "nohdr without the shim: %r" % (base,))
res = subprocess.run(argv, env=shim_env("out-nohdr", HZ=997, UNWIND="libunwind"), stdin=subprocess.DEVNULL,
                     capture_output=True, timeout=60)
check(res.returncode == 0 and res.stdout == NOHDR_CLEAN, "nohdr under the shim: %r" % (res,))
with open(os.path.join("out-nohdr", "meta.json")) as f:
    s = json.load(f).get("sampling", {})
check((s.get("samples") or 0) > 200, "nohdr: %r samples" % s.get("samples"))

finish()
EOF2
