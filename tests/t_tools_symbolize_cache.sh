#!/usr/bin/env bash
# t_tools_symbolize_cache: what the symbolizer's shortcuts must never change, on a run folder
# written here by hand (frames in tests/targets/sym_cache.c's three functions, built -O0 -g):
# - the sample file spans several of the reader's blocks (1 MiB: 200-frame records, 642 a
#   block) and ends mid-record: every whole record counts, and only those;
# - a stack's pending count (collect.c keeps one per stack while its samples keep to one thread
#   and phase): samples of one stack alternating between threads and phases, and between other
#   stacks, add up per (phase, stack) in stacks.folded and per (phase, thread) in profile.json
#   exactly as counted here;
# - the callers cache (stacks that differ only in the leaf share their callers' node): stack Y's
#   callers are stack X's whole frames, so the same addresses, but as return addresses (looked
#   up at - 1): Y's caller at sc_fa's first byte is not sc_fa, while X's leaf there is; stack W
#   shares X's callers and gets its own leaf;
# - a file that is mapped but holds no sampled frame is never opened (not even by the thread
#   that opens sampled files ahead): a copy of the library, mapped beside it, keeps the access
#   time set back here, while the sampled copy's moves (where the file system does not record
#   reads, e.g. noatime, that check says so and is left out).
# $TOOLS/perfscope-symbolize, so `make test-asan` runs it under ASan/UBSan.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-symbolize
command -v nm >/dev/null || skip "nm missing (binutils)"
build_lib sym_cache -O0
python3 - "$TOOL" "$TBUILD/sym_cache.so" <<'EOF2'
import collections, json, os, subprocess, sys
import samples
from checks import check, require, finish

tool, lib = sys.argv[1], os.path.realpath(sys.argv[2])
syms = samples.symbols(lib)
require(all(n in syms for n in ("sc_fa", "sc_fb", "sc_fc")), "sym_cache.so lacks its functions: %r" % sorted(syms))
base = 0x7f1200000000
maps = []
for off, vaddr, filesz, memsz, flags in samples.load_segments(lib):
    s, e = base + (vaddr & ~0xfff), base + ((vaddr + memsz + 0xfff) & ~0xfff)
    perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
    maps.append("%x-%x %s %08x fe:00 %d %s" % (s, e, perms, off & ~0xfff, os.stat(lib).st_ino, lib))
# A copy of the library, mapped too, that no frame lies in; both files' access times set back.
import shutil, time
unused = os.path.abspath("sym_cache_unused.so")
shutil.copyfile(lib, unused)
used = os.path.abspath("sym_cache.so")
shutil.copyfile(lib, used)
lib = used
maps = []
past = time.time() - 3 * 86400
for path, at in ((used, base), (unused, base + 0x100000000)):
    for off, vaddr, filesz, memsz, flags in samples.load_segments(path):
        s, e = at + (vaddr & ~0xfff), at + ((vaddr + memsz + 0xfff) & ~0xfff)
        perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
        maps.append("%x-%x %s %08x fe:00 %d %s" % (s, e, perms, off & ~0xfff, os.stat(path).st_ino, path))
    os.utime(path, (past, past + 3600))
fa, fb, fc = (base + syms[n][0] for n in ("sc_fa", "sc_fb", "sc_fc"))
stacks = {
    "X": [fa, fb + 4],          # leaf: sc_fa's first byte; caller sc_fb
    "Y": [fc + 2, fa, fb + 4],  # callers = X's frames, as return addresses
    "W": [fc + 3, fb + 4],      # X's callers, another leaf
}
# Phases: a [1 s, 2 s), b [2 s, 3 s), then none.
T0 = 10**9
phases = [(T0, "a", "begin"), (2 * T0, "a", "end"), (2 * T0, "b", "begin"), (3 * T0, "b", "end")]
def phase_of(t):
    return "a" if T0 <= t < 2 * T0 else "b" if 2 * T0 <= t < 3 * T0 else "(none)"
# A pattern in which one stack's samples change thread and phase often, between other stacks'.
pattern = [("X", 1), ("X", 1), ("X", 2), ("X", 1), ("Y", 1), ("X", 2), ("W", 2), ("W", 2), ("X", 1), ("Y", 2)]
n = 2400                                   # 642 records a block: four blocks, the last cut
step = 3 * T0 // n + 1
recs = []
for i in range(n):
    name, tid = pattern[(i * 7 + i // 13) % len(pattern)]
    recs.append((T0 // 2 + i * step, 100 + tid, "th-%d" % tid, stacks[name], name))
os.mkdir("run")
with open("run/cpuprof.4242.maps", "w") as f:
    f.write("\n".join(maps) + "\n")
with open("run/phases.jsonl", "w") as f:
    for t, name, ev in phases:
        f.write(json.dumps({"t_ns": t, "name": name, "event": ev}) + "\n")
MAXF = 200
samples.write_samples("run/cpuprof.4242.bin", [r[:4] for r in recs], MAXF, cut=100)
whole = n - 1                              # the last record is cut
per_block = (1 << 20) // samples.record_size(MAXF)
require(whole > 3 * per_block, "the file spans %d records, not four blocks of %d" % (whole, per_block))

res = subprocess.run([tool, "run"], capture_output=True, text=True)
check(res.returncode == 0, "symbolize exit %d: %s" % (res.returncode, res.stderr[-500:]))
check("mid-record" in res.stderr, "the cut record is reported: %r" % res.stderr[-500:])
prof = json.load(open("run/profile.json"))
if os.stat(used).st_atime > past + 60:
    check(os.stat(unused).st_atime < past + 60, "%s holds no sampled frame but was read" % unused)
    check(not any("unused" in json.dumps(m) for m in prof.get("modules", [])), "the unused file is a module: %r" % prof.get("modules"))
else:
    print("note: this file system does not record reads (noatime?): the unopened-file check is left out")
check(prof["samples"] == whole, "samples %d, the file holds %d whole records" % (prof["samples"], whole))

want_stack = collections.Counter((phase_of(r[0]), r[4]) for r in recs[:whole])
want_thread = collections.Counter((phase_of(r[0]), r[1]) for r in recs[:whole])
folded = {}
for line in open("run/stacks.folded"):
    path, _, count = line.rstrip("\n").rpartition(" ")
    folded[path] = folded.get(path, 0) + int(count)
def line_of(phase, name):
    """The folded path of a stack: X ends in sc_fa under sc_fb; Y and W end in sc_fc."""
    hits = []
    for path in folded:
        fr = path.split(";")
        if fr[0] != phase:
            continue
        if name == "X" and fr[1:] == ["sc_fb", "sc_fa"]:
            hits.append(path)
        if name == "W" and fr[1:] == ["sc_fb", "sc_fc"]:
            hits.append(path)
        if name == "Y" and len(fr) == 4 and fr[1] == "sc_fb" and fr[3] == "sc_fc":
            hits.append(path)
    return hits
for (phase, name), c in sorted(want_stack.items()):
    hits = line_of(phase, name)
    if not check(len(hits) == 1, "phase %s stack %s: one folded line, got %r (all: %r)" % (phase, name, hits, sorted(folded))):
        continue
    check(folded[hits[0]] == c, "phase %s stack %s: %d samples in stacks.folded, counted %d" % (phase, name, folded[hits[0]], c))
    if name == "Y":
        check(hits[0].split(";")[2] != "sc_fa", "Y's caller at sc_fa's first byte is a return address, "
              "looked up at - 1, so not sc_fa: %r" % hits[0])
check(sum(folded.values()) == whole, "stacks.folded adds up to %d, not %d" % (sum(folded.values()), whole))
for (phase, tid), c in sorted(want_thread.items()):
    g = prof["groups"].get(phase, {})
    got = {t["tid"]: t["cpu_s"] for t in g.get("busiest_threads", [])}
    check(abs(got.get(tid, -1) - c * 0.001) < 1e-9, "phase %s thread %d: cpu_s %r, counted %d samples" % (phase, tid, got.get(tid), c))
finish()
EOF2
