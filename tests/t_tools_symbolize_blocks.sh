#!/usr/bin/env bash
# t_tools_symbolize_blocks: the symbolizer counts every record of a file that spans several of the
# reader's blocks (format/samples.h, 1 MiB of whole records) exactly, whatever lies at a block's
# edge. It reads stacks in batches whose frames stay in the reader's block, so a batch must never
# outlive its block: the records of one block all have stack A, of the next all stack B, and so
# on, with an empty record (no frames) as the last record of each block (the one a batch would
# step over into the next block) and here and there inside. A batch that read on into the next
# block would count some of one block's A as B (or B as A).
# Stacks A and B are two real samples of a run of t_threads under the shim (burn_b and burn_c).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-symbolize
build_target t_threads
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0

LD_PRELOAD=$SHIM PERFSCOPE_OUT=$PWD/run PERFSCOPE_HZ=997 "$TBUILD/t_threads" report.json 0.2 >/dev/null ||
  fail "t_threads under the shim: exit $?"
"$TOOL" run >/dev/null || fail "perfscope-symbolize on the real run: exit $?"

python3 - <<'PY' || fail "cannot write the block-spanning file"
import collections, glob, json, os, sys
import samples

threads = {t["name"]: t for t in (json.loads(l) for l in open("report.json"))}
bins = glob.glob("run/cpuprof.*.bin")
if len(bins) != 1:
    sys.exit("one sample file expected, found %s" % bins)
sf = samples.read_samples(bins[0])
# One sample of burn-b's thread and one of burn-c's, each with its innermost frame in the
# thread's own function (not in a clock read it calls) and more frames under it.
exe = os.path.join(os.environ["BUILD"], "tests", "t_threads")
any_t = next(iter(threads.values()))
ranges = samples.runtime_ranges(exe, any_t["fn"], any_t["addr"], [t["fn"] for t in threads.values()])
pick = {}
for s in sf.samples:
    for name in ("burn-b", "burn-c"):
        lo, hi = ranges[threads[name]["fn"]]
        if s.tid == threads[name]["tid"] and len(s.frames) > 2 and lo <= s.frames[0] < hi and name not in pick:
            pick[name] = s
if len(pick) != 2:
    sys.exit("no sample of burn-b or burn-c with a stack: %s" % sorted(pick))
A, B = pick["burn-b"], pick["burn-c"]

MAXF = 64
per_block = (1 << 20) // (32 + 8 * MAXF)   # the reader's block, in records
n = 3 * per_block + 500
recs = []
for i in range(n):
    s = A if (i // per_block) % 2 == 0 else B
    empty = i % per_block == per_block - 1 or i % 997 == 13
    frames = [] if empty else list(s.frames)
    recs.append((A.t + i * 1000, s.tid, s.comm, frames))
samples.write_samples(bins[0], recs, MAXF, hz=sf.hz)
for f in ("profile.json", "stacks.folded", "profile.pb.gz", "trace.json", "flame.json"):
    if os.path.exists(os.path.join("run", f)):
        os.unlink(os.path.join("run", f))
PY
"$TOOL" run >/dev/null 2>sym.err
rc=$?
check "perfscope-symbolize on the block-spanning file: exit $rc ($(head -c 300 sym.err))" [ "$rc" -eq 0 ]

py_check "counts" - <<'PY'
import collections, glob, json
import samples
from checks import check, finish

threads = {t["name"]: t for t in (json.loads(l) for l in open("report.json"))}
sf = samples.read_samples(glob.glob("run/cpuprof.*.bin")[0])
stacks = collections.Counter((s.tid, tuple(s.frames)) for s in sf.samples if s.frames)
# What the file holds: two stacks, one per thread.
check(len(stacks) == 2, "the file holds 2 distinct stacks, found %d" % len(stacks))
want = {tid: c for (tid, _), c in stacks.items()}
# stacks.folded: "phase;outermost;...;leaf count", one line per distinct stack and phase; the
# leaf of each thread's stack is its burn function.
got = collections.Counter()
lines = [l.rsplit(" ", 1) for l in open("run/stacks.folded").read().splitlines() if l.strip()]
for stack, count in lines:
    got[stack.split(";")[-1]] += int(count)
for name in ("burn-b", "burn-c"):
    tid, fn = threads[name]["tid"], threads[name]["fn"]
    check(got.get(fn, 0) == want.get(tid, -1),
          "%s: stacks.folded counts %d samples in %s, the file holds %d"
          % (name, got.get(fn, 0), fn, want.get(tid, -1)))
check(len(lines) == 2, "stacks.folded: 2 lines (one stack per thread, no phase), found %d: %s"
      % (len(lines), [l[0][-80:] for l in lines[:5]]))
prof = json.load(open("run/profile.json"))
total = prof.get("samples", prof.get("totals", {}).get("samples"))
check(total == sum(want.values()), "profile.json: %r samples, the file holds %d" % (total, sum(want.values())))
finish()
PY
checks_done
