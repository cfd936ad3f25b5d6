#!/usr/bin/env bash
# t_shim_unwabi: the program's C++ unwinder ABI (_Unwind_*) is libgcc_s's under the shim, as
# without it, though the shim brings libunwind, which exports that whole ABI, into the program's
# global scope (docs/shim.md, "The program's unwinder"). tests/targets/r_unwabi.c is a C program
# built without -fexceptions (libgcc_s is not among its libraries, as in Python) with a C++
# library it loads with dlopen (r_unwabi_lib.cc). Each part exits 0 within 20 s and prints what it
# prints without the shim, at PERFSCOPE_HZ=0, at 997 Hz, and at 997 Hz after 1.5 s on the CPU
# (libunwind in use by then: most samples walked with it):
# - exit-in-callback: pthread_exit inside a dl_iterate_phdr callback, then dl_iterate_phdr again
#   (it hung: the clean-up that releases the loader's lock was skipped);
# - raii-exit, raii-cancel: a C++ thread ended by pthread_exit, or cancelled in a blocking read,
#   runs its destructor (before: SIGSEGV, and no destructor);
# - throw: a C++ exception through three frames with destructors;
# - owner: the object dlsym(RTLD_DEFAULT) finds for _Unwind_RaiseException and _Unwind_GetIPInfo
#   is the one found without the shim, or libgcc_s (which the shim loads): never libunwind
#   (before: libunwind.so.8).
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
        want = [base.stdout]
        if part == "owner":
            want.append(b"owner: _Unwind_RaiseException libgcc_s.so.1, _Unwind_GetIPInfo libgcc_s.so.1\n")
        check(res.returncode == 0 and res.stdout in want,
              "%s: exit %s, %r (without the shim: %r)" % (what, res.returncode, res.stdout, base.stdout))
        if spin:
            with open(os.path.join(out, "meta.json")) as f:
                s = json.load(f).get("sampling", {})
            taken, fp = s.get("samples") or 0, s.get("samples_without_libunwind") or 0
            check(taken > 100 and fp < taken / 2, "%s: %d samples, %d without libunwind: libunwind not in use"
                  % (what, taken, fp))

finish()
EOF2
