#!/usr/bin/env bash
# t_shim_unwabi: the program's C++ unwinder ABI (_Unwind_*) is its own under the shim, as without
# it, though the shim uses libunwind, which exports that whole ABI (preload/unwlib.h: loaded with
# dlopen RTLD_LOCAL, never linked). tests/targets/r_unwabi.c is a C program built without
# -fexceptions (libgcc_s is not among its libraries, as in Python) with a C++ library it loads
# with dlopen (r_unwabi_lib.cc). Each part exits 0 within 20 s and prints what it prints without
# the shim, at PERFSCOPE_HZ=0, at 997 Hz, and at 997 Hz after 1.5 s on the CPU (libunwind in use
# by then: most samples walked with it):
# - exit-in-callback: pthread_exit inside a dl_iterate_phdr callback, then dl_iterate_phdr again
#   (it hung with libunwind linked: the clean-up that releases the loader's lock was skipped);
# - raii-exit, raii-cancel: a C++ thread ended by pthread_exit, or cancelled in a blocking read,
#   runs its destructor (linked: SIGSEGV, and no destructor);
# - throw: a C++ exception through three frames with destructors;
# - owner: dlsym(RTLD_DEFAULT) finds no _Unwind_RaiseException or _Unwind_GetIPInfo, as without
#   the shim (linked: libunwind's).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_unwabi
build_lib r_unwabi_lib

python3 - <<'EOF2'
import json, os, subprocess
from shimlib import *

lib = os.path.join(TBUILD, "r_unwabi_lib.so")
parts = ["exit-in-callback", "raii-exit", "raii-cancel", "throw", "owner"]


def go(argv, env, what):
    try:
        p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        fail("%s: still running after 20 s (hung)" % what)
        return None
    return p


for part in parts:
    base = go([target("r_unwabi"), lib, part], plain_env(), part + " without the shim")
    require(base is not None and base.returncode == 0 and base.stdout, "%s without the shim: %r" % (part, base))
    info("%s: %s" % (part, base.stdout.decode().strip()))
    for mode, hz, spin in (("HZ=0", 0, None), ("997 Hz", 997, None), ("997 Hz after 1.5 s", 997, "1.5")):
        what = "%s under the shim, %s" % (part, mode)
        out = "out-%s-%d-%s" % (part, hz, spin or "0")
        argv = [target("r_unwabi"), lib, part] + ([spin] if spin else [])
        res = go(argv, shim_env(out, HZ=hz, UNWIND="libunwind"), what)
        if res is None:
            continue
        check(res.returncode == 0 and res.stdout == base.stdout,
              "%s: exit %s, %r (without the shim: %r)" % (what, res.returncode, res.stdout, base.stdout))
        if spin:
            with open(os.path.join(out, "meta.json")) as f:
                s = json.load(f).get("sampling", {})
            taken, fp = s.get("samples") or 0, s.get("samples_without_libunwind") or 0
            check(taken > 100 and fp < taken / 2, "%s: %d samples, %d without libunwind: libunwind not in use"
                  % (what, taken, fp))

finish()
EOF2
