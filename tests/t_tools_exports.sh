#!/usr/bin/env bash
# t_tools_exports: what $TOOLS/perfscope-symbolize exports (stacks.folded, trace.json,
# profile.pb.gz, profile.json) for a run of tests/targets/e_exports under the shim, started
# through `sh -c 'exec ...'` (the leader's executable is sh, which the target replaces), built
# from a relative source path; and for t_deep at PERFSCOPE_MAX_FRAMES=16. Checks:
# - stacks.folded: every (phase;stack) once, the counts add up to the samples;
# - no frame of the shim's own anywhere: no libperfscope.so frame in any raw stack whose leaf is
#   the target's (the shim leaves none between libc and main or a thread's start), no
#   main_trampoline/main_entry/thread_trampoline or libperfscope.so in folded, trace, pprof,
#   profile.json;
# - trace.json: per (pid, tid) the sample slices' counts add up to that thread's records with
#   frames, each slice named by its stack's leaf (the stack: the slice's "sf" followed through
#   the top-level "stackFrames" dictionary, parent by parent), slices on a track never overlap; no name holds
#   "(pid"; the process is named e_exports (after the exec), not sh;
# - pprof, from another folder: `go tool pprof -list` shows the source lines (absolute paths),
#   `-raw` shows phase.0=req, phase.1=step, phase=step and request=7, "File:" is the leader's
#   executable, not [unknown];
# - t_deep at 16 frames: every stack of 16 frames has a [truncated] root in folded, pprof and
#   trace (args.truncated, and its stackFrames chain starts at [truncated]), and the whole ones
#   do not.
# Skips only the go tool pprof checks (one line, exit 77 at the end) when go is not installed.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-symbolize
build_target t_deep
# From a relative path, as a project's own build would: DWARF then names the files relative to
# the compilation directory.
mkdir -p "$TBUILD"
(cd "$ROOT" && ${CC:-gcc} -O1 -g -fno-omit-frame-pointer -pthread -Itests/targets \
   -o "$TBUILD/e_exports.tmp" tests/targets/e_exports.c) || fail "cannot build e_exports"
mv -f "$TBUILD/e_exports.tmp" "$TBUILD/e_exports"
hz=199
if perf_events_allowed; then hz=997; fi

python3 - "$TOOL" "$hz" <<'EOF2'
import collections, gzip, json, os, re, shutil, subprocess, sys
from checks import failures
from shimlib import *
import samples

tool, hz = sys.argv[1], int(sys.argv[2])
SHIM_NAMES = re.compile(r"main_trampoline|main_entry|thread_trampoline|libperfscope")
here = os.getcwd()


def symbolize(out):
    r = subprocess.run([tool, out], capture_output=True, text=True, timeout=120)
    info("perfscope-symbolize %s: rc %d %s" % (out, r.returncode, r.stderr[-400:]))
    require(r.returncode == 0, "perfscope-symbolize %s: exit %d" % (out, r.returncode))
    return json.load(open(os.path.join(out, "profile.json")))


def folded_lines(out):
    lines = []
    for l in open(os.path.join(out, "stacks.folded")):
        stack, _, n = l.rstrip("\n").rpartition(" ")
        lines.append((stack, int(n)))
    return lines


def raw_records(out):
    """{(pid, tid): records with frames} and every record with its mapping snapshots."""
    per, recs = collections.Counter(), []
    for pid, files in samples.bin_files(out).items():
        for _, stem in files:
            sf = samples.read_samples(stem + ".bin")
            snaps = samples.read_maps(stem + ".maps") if os.path.exists(stem + ".maps") else [(0, [])]
            for s in sf.samples:
                if s.frames:
                    per[(pid, s.tid)] += 1
                    recs.append((s, snaps, sf.max_frames))
    return per, recs


go = shutil.which("go")


def pprof(*args):
    r = subprocess.run([go, "tool", "pprof"] + list(args), capture_output=True, text=True,
                       cwd="/tmp", env=dict(os.environ, PPROF_BINARY_PATH="/nonexistent"), timeout=120)
    if r.returncode != 0:
        fail("go tool pprof %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr[-400:]))
    return r.stdout


# ---------------------------------------------------------------- e_exports, through sh -c exec
exe = target("e_exports")
os.mkdir("out")
markers = os.path.abspath("out/markers")
open(markers, "w").close()
res = run(["/bin/sh", "-c", 'exec "$0" "$@"', exe, markers],
          shim_env("out", HZ=hz, LLMPERFSCOPE_MARKERS=markers), what="sh -c exec e_exports")
expect_ok(res, "e_exports")
prof = symbolize("out")
out = os.path.abspath("out")

# stacks.folded
lines = folded_lines("out")
stacks = [s for s, _ in lines]
dup = [s for s, n in collections.Counter(stacks).items() if n > 1]
check(not dup, "stacks.folded: %d stacks on more than one line, e.g. %r" % (len(dup), dup[:1]))
check(not any("[truncated]" in s for s in stacks), "stacks.folded: [truncated] on a whole stack")
check(sum(n for _, n in lines) == prof["samples"],
      "stacks.folded adds up to %d, profile.json has %d samples" % (sum(n for _, n in lines), prof["samples"]))
check(any(s.startswith("step;") and s.endswith(";main;burn_inner") for s in stacks),
      "stacks.folded: no step;...;main;burn_inner line")
check(any(s.startswith("step;") and s.endswith(";start_thread;worker;burn_worker") for s in stacks),
      "stacks.folded: no step;...;start_thread;worker;burn_worker line (the thread's start)")

# No shim frame: in the raw stacks of the target's own leaves, then in every output.
per_thread, recs = raw_records("out")
syms = samples.symbols(exe)
own = 0
shim_frames = 0
for s, snaps, _ in recs:
    maps = samples.snapshot_at(snaps, s.t)
    leaf = samples.find_mapping(maps, s.frames[0])
    if not leaf or os.path.realpath(leaf.path) != os.path.realpath(exe):
        continue
    own += 1
    for a in s.frames[1:]:
        m = samples.find_mapping(maps, a - 1)
        if m and os.path.basename(m.path) == "libperfscope.so":
            shim_frames += 1
            break
info("%d raw stacks with the target's leaf, %d with a libperfscope.so frame" % (own, shim_frames))
check(own > 0, "no raw stack with the target's own leaf")
check(shim_frames == 0, "%d of %d raw stacks hold a frame of libperfscope.so" % (shim_frames, own))
for name in ("stacks.folded", "trace.json", "profile.json"):
    text = open(os.path.join("out", name)).read()
    m = SHIM_NAMES.search(text)
    check(not m, "%s names the shim: %r" % (name, text[max(0, m.start() - 80):m.end() + 20] if m else ""))
pb = gzip.open("out/profile.pb.gz").read()
check(b"main_trampoline" not in pb and b"libperfscope" not in pb, "profile.pb.gz names the shim")

# trace.json
def trace_stack(tr, e):
    """A sample slice's stack, outermost first: its "sf" followed through "stackFrames" (each
    frame's parent) to the root; None when sf or a parent names no frame, or the chain loops."""
    frames, out, at = tr.get("stackFrames", {}), [], e.get("sf")
    while at is not None:
        f = frames.get(str(at))
        if f is None or len(out) > len(frames):
            return None
        out.append(f["name"])
        at = f.get("parent")
    return out[::-1] or None


tr = json.load(open("out/trace.json"))
ev = tr["traceEvents"]
sl = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "sample"]
got = collections.Counter()
tracks = collections.defaultdict(list)
for e in sl:
    got[(e["pid"], e["tid"])] += e["args"]["samples"]
    tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    st = trace_stack(tr, e)
    check(st and st[-1] == e["name"],
          "trace.json: slice %r is not named by its stack's leaf %r (sf %r)" % (e["name"], (st or [])[-1:], e.get("sf")))
info("trace.json: %d sample slices on %d tracks; samples per thread %s, records %s"
     % (len(sl), len(tracks), dict(got), dict(per_thread)))
check(got == per_thread, "trace.json: sample slices per (pid, tid) %s, the sample files hold %s"
      % (dict(got), dict(per_thread)))
for track, spans in tracks.items():
    spans.sort()
    bad = [(a, b) for a, b in zip(spans, spans[1:]) if b[0] < a[1] - 1e-3]
    check(not bad, "trace.json: track %s: overlapping sample slices %s" % (track, bad[:2]))
meta_names = [e for e in ev if e.get("ph") == "M"]
for e in meta_names:
    check("(pid" not in e["args"]["name"], "trace.json: %s %r holds a pid" % (e["name"], e["args"]["name"]))
pname = {e["pid"]: e["args"]["name"] for e in meta_names if e["name"] == "process_name"}
check(pname.get(res.pid) == "e_exports",
      "trace.json: process %d named %r, expected e_exports (the image after exec)" % (res.pid, pname.get(res.pid)))
check(sum(1 for e in meta_names if e["name"] == "thread_name" and e["args"]["name"] == "worker") == 1,
      "trace.json: no thread track named worker")

# pprof
meta = json.load(open("out/meta.json"))
if go:
    listing = pprof("-list", "^burn_inner$", os.path.join(out, "profile.pb.gz"))
    check("ROUTINE" in listing and "DEFINE_BURN(burn_inner)" in listing
          and os.path.join(ROOT, "tests/targets/e_exports.c") in listing,
          "go tool pprof -list burn_inner from /tmp shows no source (%r)" % listing[-300:])
    listing = pprof("-list", "^main$", os.path.join(out, "profile.pb.gz"))
    check('mark("req", "begin", " request=7");' in listing,
          "go tool pprof -list main from /tmp shows no source of e_exports.c (%r)" % listing[-300:])
    raw = pprof("-raw", os.path.join(out, "profile.pb.gz"))
    want = ["phase.0:[req]", "phase.1:[step]", "phase:[step]", "request:[7]"]
    check(all(w in raw for w in want), "go tool pprof -raw: labels %s not all shown" % want)
    check(re.search(r"phase\.0:\[req\][^\n]*phase\.1:\[step\][^\n]*phase:\[step\]", raw) is not None
          or all(w in raw for w in want), "go tool pprof -raw: no sample with phase.0=req phase.1=step")
    top = pprof("-top", os.path.join(out, "profile.pb.gz"))
    file_line = next((l for l in top.splitlines() if l.startswith("File:")), "")
    check(file_line == "File: " + os.path.basename(meta.get("executable", "?")),
          "go tool pprof: %r, expected File: %s (the leader's executable)" % (file_line, os.path.basename(meta.get("executable", "?"))))
    info("pprof: %s; -raw labels %s" % (file_line, [w for w in want if w in raw]))
    # A leader whose executable has no frame in any stack (a shell that only started the
    # target): its mapping still comes first, so pprof's File: names it.
    shutil.copytree("out", "noexe")
    meta["executable"] = "/bin/sh"
    meta["build_id"] = "00" * 20
    json.dump(meta, open("noexe/meta.json", "w"))
    symbolize("noexe")
    top = pprof("-top", os.path.abspath("noexe/profile.pb.gz"))
    file_line = next((l for l in top.splitlines() if l.startswith("File:")), "")
    check(file_line == "File: sh", "go tool pprof, executable without samples: %r, expected File: sh" % file_line)

# ---------------------------------------------------------------- shim frames in raw stacks
# A hand-made folder whose stacks do hold the shim's code (its library mapped as the shim maps
# it): the symbolizer leaves those frames out, and a stack of nothing else is [perfscope].
def maps_lines(path, base):
    out = []
    for off, vaddr, filesz, memsz, flags in samples.load_segments(path):
        a, b = base + (vaddr & ~0xfff), base + ((vaddr + memsz + 0xfff) & ~0xfff)
        perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
        out.append("%x-%x %s %08x fe:00 %d %s" % (a, b, perms, off & ~0xfff, os.stat(path).st_ino, path))
    return out


shim = os.environ["SHIM"]
BE, BS = 0x555555554000, 0x7f1000000000
ssyms = samples.symbols(shim)
in_shim = BS + ssyms["__libc_start_main"][0] + 4
os.mkdir("syn")
with open("syn/cpuprof.4242.maps", "w") as f:
    f.write("\n".join(maps_lines(exe, BE) + maps_lines(shim, BS)) + "\n")
samples.write_samples("syn/cpuprof.4242.bin", [
    (1000000, 4242, "syn", [BE + syms["burn_inner"][0] + 4, in_shim + 1, BE + syms["main"][0] + 8]),
    (2000000, 4242, "syn", [in_shim]),
], max_frames=8)
symbolize("syn")
got = dict(folded_lines("syn"))
check(got == {"(none);main;burn_inner": 1, "(none);[perfscope]": 1},
      "shim frames not left out: stacks.folded %s" % got)
for name in ("stacks.folded", "trace.json", "profile.json"):
    text = open(os.path.join("syn", name)).read()
    check("libperfscope" not in text and "__libc_start_main" not in text, "syn/%s names the shim" % name)
pb = gzip.open("syn/profile.pb.gz").read()
check(b"libperfscope" not in pb and b"__libc_start_main" not in pb, "syn/profile.pb.gz names the shim")

# ---------------------------------------------------------------- t_deep at 16 frames
res = run([target("t_deep"), "deep.json"], shim_env("deep", HZ=hz, MAX_FRAMES=16), what="t_deep")
expect_ok(res, "t_deep")
symbolize("deep")
_, recs = raw_records("deep")
cut = sum(1 for s, _, mf in recs if len(s.frames) == mf)
whole = len(recs) - cut
lines = folded_lines("deep")
tr_lines = sum(n for s, n in lines if s.split(";")[1:2] == ["[truncated]"])
info("t_deep at 16 frames: %d records cut, %d whole; folded: %d under [truncated]" % (cut, whole, tr_lines))
check(cut > 0, "t_deep: no record with 16 frames")
check(tr_lines == cut, "stacks.folded: %d samples under [truncated], %d records have 16 frames" % (tr_lines, cut))
check(all(s.endswith(";burn_leaf") is False or s.split(";")[1] == "[truncated]" for s, _ in lines),
      "stacks.folded: a burn_leaf stack without its [truncated] root")
check(not any("[truncated]" in s.split(";")[2:] for s, _ in lines), "stacks.folded: [truncated] not at the root")
tr = json.load(open("deep/trace.json"))
sl = [e for e in tr["traceEvents"] if e.get("cat") == "sample"]
check(sum(e["args"]["samples"] for e in sl if e["args"].get("truncated")) == cut,
      "trace.json: truncated slices hold %d samples, %d records are cut"
      % (sum(e["args"]["samples"] for e in sl if e["args"].get("truncated")), cut))
check(all((trace_stack(tr, e) or [])[:1] == ["[truncated]"] for e in sl if e["args"].get("truncated")),
      "trace.json: a truncated slice's stack does not start with [truncated]")
if go:
    traces = pprof("-traces", os.path.abspath("deep/profile.pb.gz"))
    check("[truncated]" in traces, "go tool pprof -traces shows no [truncated] frame")

if failures():
    finish()
if not go:
    print("go is not installed (apt-get install golang-go): everything else passed, the pprof checks were skipped")
    sys.exit(77)
finish()
EOF2
