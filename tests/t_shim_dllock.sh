#!/usr/bin/env bash
# t_shim_dllock: the handler never waits on the dynamic loader's lock (preload/dlbusy.h).
# tests/targets/m_dllock.c holds the lock in a dl_iterate_phdr callback until its worker thread
# has moved on, while the worker runs through 4096 functions whose return addresses libunwind
# has not cached (each a dl_iterate_phdr lookup from the handler). Under the shim at 997 Hz
# with libunwind, for 3 s:
# - no stall (the worker never stops 1 s on the lock): stdout "stalls: 0" as without the shim
#   (before the fix: 2-3 stalls in each of five runs, the worker stopped in the handler);
# - exit 0, meta.json status "ok", samples taken; those taken while the lock was held walked
#   frame pointers (sampling.samples_without_libunwind > 0).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target m_dllock

python3 - <<'EOF2'
import os
import samples
from shimlib import *

argv = [target("m_dllock"), "3"]
base = run(argv, plain_env(), timeout=60, what="m_dllock without the shim")
expect_ok(base, "m_dllock without the shim")
require(base.stdout == b"stalls: 0\n", "without the shim: %r" % base.stdout)
for i in range(2):
    what = "m_dllock under the shim, run %d" % (i + 1)
    out = "out-%d" % i
    res = run(argv, shim_env(out, HZ=997, UNWIND="libunwind"), timeout=60, what=what)
    expect_ok(res, what)
    check(res.stdout == base.stdout, "%s: %r (the worker stopped on the loader's lock in the handler)"
          % (what, res.stdout))
    meta = samples.read_meta(os.path.join(out, "meta.json"))
    s = meta.get("sampling", {})
    info("%s: %s samples, %s without libunwind" % (what, s.get("samples"), s.get("samples_without_libunwind")))
    check(meta.get("status") == "ok", "%s: meta.json status %r" % (what, meta.get("status")))
    check((s.get("samples") or 0) > 0, "%s: no samples" % what)
    check((s.get("samples_without_libunwind") or 0) > 0,
          "%s: no sample walked frame pointers while the lock was held: %r" % (what, s))
finish()
EOF2
