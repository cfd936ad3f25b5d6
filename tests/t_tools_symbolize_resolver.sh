#!/usr/bin/env bash
# t_tools_symbolize_resolver: the resolver thread (symbolize/collect.c resolves new stacks while
# the samples are still being read) and the spill (symbolize/spill.c: the counted samples kept
# for the writers that go through them again, trace.json and pprof's per-occurrence counts)
# must change nothing in any output. On a run folder written
# here: two processes, 4,000 distinct 30-frame stacks over libc, libm and libstdc++ (some cut at
# max_frames), JIT frames named from a perf map with a bad line (a warning the resolver gives,
# while the reading goes on), the second sample file cut mid-record (a warning the reading gives
# after it), a mapped file that is gone (a module warning), a phase that occurs twice (so pprof
# replays the samples). Every output is compared byte for byte with the same folder symbolized
# with PERFSCOPE_SYMBOLIZE_RESOLVER=0 PERFSCOPE_SYMBOLIZE_SPILL=0 (stacks resolved after the last
# sample, files opened ahead on the prefetching thread, the sample files read again), with each
# of the two alone and with neither (twice), and the warnings must come in the reading's order,
# the resolver's after it; flame.json's trees give the same paths and samples as stacks.folded.
# $TOOLS/perfscope-symbolize, so `make test-asan` runs it under ASan/UBSan.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-symbolize
command -v nm >/dev/null || skip "nm missing (binutils)"
python3 - "$TOOL" <<'EOF'
import collections, json, os, random, shutil, subprocess, sys
import samples
from checks import check, require, finish

tool = sys.argv[1]
libs = [os.path.realpath(l) for l in ("/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                      "/usr/lib/x86_64-linux-gnu/libstdc++.so.6") if os.path.exists(l)]
require(libs, "none of libc, libm, libstdc++ found")
rng = random.Random(9)
JIT = 0x7e0000000000
os.mkdir("run")
pool, maps = [], []
base = 0x7f0000000000
for lib in libs:
    for off, vaddr, filesz, memsz, flags in samples.load_segments(lib):
        s, e = base + (vaddr & ~0xfff), base + ((vaddr + memsz + 0xfff) & ~0xfff)
        perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
        maps.append("%x-%x %s %08x fe:00 %d %s" % (s, e, perms, off & ~0xfff, os.stat(lib).st_ino, lib))
    out = subprocess.run(["nm", "-D", "-S", "--defined-only", lib], capture_output=True, text=True).stdout
    for l in out.splitlines():  # the dynamic symbols: these libraries ship stripped
        p = l.split()
        if len(p) == 4 and p[2] in "tTwWi" and int(p[1], 16) >= 16:
            pool.append((base + int(p[0], 16), int(p[1], 16)))
    base += 0x100000000
require(len(pool) > 100, "too few functions in %r" % libs)
maps.append("%x-%x rwxp 00000000 00:00 0 " % (JIT, JIT + 0x10000))
maps.append("7d0000000000-7d0000010000 r-xp 00001000 fe:00 99 /nonexistent/gone.so")
MAXF = 30
def stack(k):
    """A 30-frame stack (or fewer), some through the JIT code or the gone file, some cut."""
    n = MAXF if k % 7 == 0 else rng.randrange(3, MAXF)
    fr = [a + rng.randrange(4, size) for a, size in (rng.choice(pool) for _ in range(n))]
    if k % 5 == 0:
        fr[rng.randrange(1, n)] = JIT + 0x100 + rng.randrange(0, 0x300)
    if k % 11 == 0:
        fr[rng.randrange(1, n)] = 0x7d0000001000 + rng.randrange(0, 0x100)
    return fr
stacks = [stack(k) for k in range(4000)]
T0 = 10**9
with open("run/phases.jsonl", "w") as f:
    for k, name in enumerate(("load", "decode", "prefill", "decode")):
        f.write(json.dumps({"t_ns": T0 + k * T0, "name": name, "event": "begin"}) + "\n")
        f.write(json.dumps({"t_ns": T0 + (k + 1) * T0, "name": name, "event": "end"}) + "\n")
for pid, n, cut in ((5101, 12000, 0), (5102, 8000, 100)):
    with open("run/cpuprof.%d.maps" % pid, "w") as f:
        f.write("\n".join(maps) + "\n")
    recs = []
    for i in range(n):
        s = rng.randrange(len(stacks)) if i % 3 else i % len(stacks)
        tid = pid * 10 + s % 4
        recs.append((T0 // 2 + i * (5 * T0 // n), tid, "w-%d" % (s % 4), stacks[s]))
    samples.write_samples("run/cpuprof.%d.bin" % pid, recs, MAXF, cut=cut)
with open("run/perf-5101.map", "w") as f:
    f.write("%x 200 jit_one\n%x 200 jit_two\nnot a line\n" % (JIT + 0x100, JIT + 0x300))
shutil.copy("run/perf-5101.map", "run/perf-5102.map")

OUTS = ("profile.json", "stacks.folded", "profile.pb.gz", "trace.json", "flame.json")
def symbolize(env):
    res = subprocess.run([tool, "run"], capture_output=True, text=True, env=dict(os.environ, **env), timeout=120)
    require(res.returncode == 0, "symbolize %r: exit %d: %s" % (env, res.returncode, res.stderr[-800:]))
    return {o: open("run/" + o, "rb").read() for o in OUTS}, res.stderr

serial, serial_err = symbolize({"PERFSCOPE_SYMBOLIZE_RESOLVER": "0", "PERFSCOPE_SYMBOLIZE_SPILL": "0"})
warn = json.loads(serial["profile.json"])["warnings"]
at = lambda text: next((i for i, w in enumerate(warn) if text in w), None)
check(at("bad lines skipped") is not None, "the perf map's bad line is a warning: %r" % warn)
check(at("mid-record") is not None, "the cut sample file is a warning: %r" % warn)
check(at("mid-record") is not None and at("bad lines skipped") is not None and at("mid-record") < at("bad lines skipped"),
      "the reading's warnings come before the resolving's: %r" % warn)
flame = json.loads(serial["flame.json"])
check(any(f[0] == "jit_one" for f in flame["frames"]), "the JIT frames are named from the perf map")
check(any(f[4] == 1 for f in flame["frames"]), "some stacks are cut at max_frames")
check(json.loads(serial["trace.json"])["otherData"]["samples_complete"], "trace.json has every sample")
# flame.json's call trees (export_flame.c, which walks each stack only down from its first node
# already placed) against stacks.folded (export_folded.c, its own tree): per group, the samples of
# every path of function names, root first, are the same.
def clean(name):
    return "".join(":" if c == ";" else "?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in name)
from_flame = collections.Counter()
for g in flame["groups"]:
    nodes = g["nodes"]
    paths = []
    for i in range(0, len(nodes), 3):
        parent, frame, self_count = nodes[i:i + 3]
        paths.append((paths[parent] if parent >= 0 else (g["name"],)) + (clean(flame["frames"][frame][0]),))
        if self_count:
            from_flame[";".join(paths[-1])] += self_count
from_folded = collections.Counter()
for line in serial["stacks.folded"].decode().splitlines():
    path, _, count = line.rpartition(" ")
    from_folded[path] += int(count)
check(from_flame == from_folded, "flame.json's paths and stacks.folded's differ: %d and %d paths, %d in one only"
      % (len(from_flame), len(from_folded), len(set(from_flame) ^ set(from_folded))))
for rnd, env in ((1, {}), (2, {}), (3, {"PERFSCOPE_SYMBOLIZE_RESOLVER": "0"}), (4, {"PERFSCOPE_SYMBOLIZE_SPILL": "0"})):
    got, got_err = symbolize(env)
    for o in OUTS:
        check(got[o] == serial[o], "round %d %r: %s differs from resolving after the reading and reading the samples again (%d and %d bytes)"
              % (rnd, env, o, len(got[o]), len(serial[o])))
    strip = lambda e: [l for l in e.splitlines() if " s -> " not in l]  # the summary line holds the time taken
    check(strip(got_err) == strip(serial_err), "round %d %r: the warnings printed differ:\n%s\n---\n%s"
          % (rnd, env, got_err[-600:], serial_err[-600:]))
finish()
EOF
