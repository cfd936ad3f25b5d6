#!/usr/bin/env bash
# t_shim_exec: a relative LD_PRELOAD and a cd before a new image (issue 8, defect 9): the README's
# own LD_PRELOAD=build/libperfscope.so form. tests/targets/e_cdexec.c changes directory, then
# starts a new image of itself by execv, by execve with an environment it built (the relative
# LD_PRELOAD and PERFSCOPE_OUT given literally), by posix_spawn, by system() and by vfork+execv.
# Run with LD_PRELOAD="libm.so.6 lib/libperfscope.so" (lib/ a link here to $SHIM) and relative
# PERFSCOPE_OUT and LLMPERFSCOPE_MARKERS. For each:
# - status and stdout as without the shim, nothing on stderr (ld.so said "cannot be preloaded");
# - the new image recorded: every exec line of procs.jsonl followed by a start of its pid, the
#   child image's start line and sample file, meta.json's status ok;
# - the child's environment: LD_PRELOAD with the shim's entry absolute and the rest byte for
#   byte, PERFSCOPE_OUT and LLMPERFSCOPE_MARKERS absolute (the same folder), every other entry
#   as given.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target e_cdexec
mkdir -p lib elsewhere
ln -sf "$SHIM" lib/libperfscope.so

python3 - <<'EOF2'
import json, os
import samples
from shimlib import *

exe = target("e_cdexec")
shim_real = os.path.realpath(os.environ["SHIM"])
here = os.getcwd()
WANT_OUT = {"execv": "child done\n", "execve-own": "child done\n"}


def env_file(path):
    return [l for l in open(path).read().split("\n") if l]


for mode in ("execv", "execve-own", "posix_spawn", "system", "vfork"):
    out, envfile = "out-" + mode, os.path.join(here, "env-" + mode)
    base = run([exe, mode, "elsewhere", envfile + ".plain", "x", "x"], plain_env(), what=mode + " without the shim")
    expect_ok(base, mode + " without the shim")
    preload = "libm.so.6 lib/libperfscope.so" if mode == "execv" else "lib/libperfscope.so"
    env = shim_env(out, HZ=199, LD_PRELOAD=preload, LLMPERFSCOPE_MARKERS=out + "/markers")
    res = run([exe, mode, "elsewhere", envfile, "lib/libperfscope.so", out], env, what=mode)
    check(res.rc == 0 and res.stdout == base.stdout, "%s: rc %r stdout %r, without the shim %r %r"
          % (mode, res.rc, res.stdout, base.rc, base.stdout))
    check(res.stderr == b"", "%s: stderr %r" % (mode, res.stderr.decode("utf-8", "replace")))
    procs = samples.read_jsonl(os.path.join(out, "procs.jsonl")) if os.path.exists(os.path.join(out, "procs.jsonl")) else []
    last = {}
    for r in procs:
        last[r["pid"]] = r["event"]
    check(all(e != "exec" for e in last.values()),
          "%s: an exec line with no start after it (the shim did not load in the new image): %s" % (mode, procs))
    images = [r for r in procs if r["event"] == "start" and r.get("exe") == exe]
    check(len(images) >= 2, "%s: %d images of e_cdexec started under the shim, want 2 (the parent's and the child's)"
          % (mode, len(images)))
    # A sample file is made with an image's first sample: an image that took samples has its
    # file, one that took none (its exit or exec line says samples 0) has none.
    def taken(start):
        after = procs[procs.index(start) + 1:]
        end = next((r for r in after if r["pid"] == start["pid"] and r["event"] in ("exec", "exit")), None)
        return (end or {}).get("sampling", {}).get("samples")
    # (An image that took none leaves its name free: the next image of its pid names it again.)
    sampled = {}
    for r in images:
        sampled[r.get("samples", "-")] = sampled.get(r.get("samples", "-")) or taken(r) != 0
    check(all(os.path.exists(os.path.join(out, f)) == s for f, s in sampled.items()),
          "%s: an image with samples and no sample file, or a file without samples: %s (samples %s)"
          % (mode, images, [taken(r) for r in images]))
    meta = json.load(open(os.path.join(out, "meta.json"))) if os.path.exists(os.path.join(out, "meta.json")) else {}
    check(meta.get("status") == "ok", "%s: meta.json's status %r" % (mode, meta.get("status")))
    if not os.path.exists(envfile):
        fail("%s: the child wrote no %s" % (mode, envfile))
        continue
    got = env_file(envfile)
    gotd = dict(l.split("=", 1) for l in got)
    want_preload = preload.replace("lib/libperfscope.so", shim_real)
    check(gotd.get("LD_PRELOAD") == want_preload, "%s: the child's LD_PRELOAD %r, want %r"
          % (mode, gotd.get("LD_PRELOAD"), want_preload))
    check(gotd.get("PERFSCOPE_OUT") == os.path.join(here, out), "%s: the child's PERFSCOPE_OUT %r, want %r"
          % (mode, gotd.get("PERFSCOPE_OUT"), os.path.join(here, out)))
    check(gotd.get("PERFSCOPE_RUN_ID") == meta.get("run_id"), "%s: the child's PERFSCOPE_RUN_ID %r, the run's %r"
          % (mode, gotd.get("PERFSCOPE_RUN_ID"), meta.get("run_id")))
    if mode == "execve-own":
        # As handed on, and the run's id, which the child's shim exports for its descendants.
        want = ["LD_PRELOAD=" + want_preload, "PERFSCOPE_OUT=" + os.path.join(here, out), "PERFSCOPE_HZ=199", "KEEP=x y:z"]
        check([l for l in got if not l.startswith("PERFSCOPE_RUN_ID=")] == want,
              "%s: the child's environment %r, want %r" % (mode, got, want))
        continue
    check(gotd.get("LLMPERFSCOPE_MARKERS") == os.path.join(here, out, "markers"),
          "%s: the child's LLMPERFSCOPE_MARKERS %r" % (mode, gotd.get("LLMPERFSCOPE_MARKERS")))
    rewritten = ("LD_PRELOAD", "PERFSCOPE_OUT", "LLMPERFSCOPE_MARKERS", "PERFSCOPE_RUN_ID")
    given = {k: v for k, v in env.items() if k not in rewritten}
    # system() runs /bin/sh, which may add PWD, SHLVL, OLDPWD and _ of its own.
    shell = ("PWD", "OLDPWD", "SHLVL", "_") if mode == "system" else ()
    kept = {k: v for k, v in gotd.items() if k not in rewritten and k not in shell}
    check(kept == {k: v for k, v in given.items() if k not in shell},
          "%s: the child's other entries differ: %s" % (mode, sorted(set(kept.items()) ^ set(given.items()))[:6]))
    check(len(got) == len(gotd), "%s: the child's environment has an entry twice" % mode)
finish()
EOF2
