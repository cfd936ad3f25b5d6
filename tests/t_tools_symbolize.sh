#!/usr/bin/env bash
# t_tools_symbolize: $TOOLS/perfscope-symbolize on synthetic run folders, so every answer is known
# exactly (named "tools": `make test-asan` runs it against the ASan/UBSan build).
# Good folder: samples whose frames point into real test binaries mapped by a hand-written maps
# file; checks each name: a function, a return address looked up at address - 1, the inline chain
# and its file:line against addr2line, a demangled template, module!0xOFFSET in a stripped
# library, [vdso]/[heap]/[stack]/[anon]/[unknown], JIT names from a perf map, the maps snapshot in
# force at the sample's time, files replaced/modified/deleted since the run flagged and not
# named, a FIFO or device never opened; phases (nested, bad lines) and threads.
# Hostile folders: missing, empty, a cut or corrupt .bin, absurd max_frames, nframes over
# max_frames, missing or garbage maps, broken phases/meta/procs/counters/perf map, random
# corruption: exit 0 or 2 with one line, never a crash, never a partial or temporary file left.
# Checks as tests/checks.py: one FAIL line per failed check, the count at the end.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-symbolize
command -v addr2line >/dev/null || skip "addr2line (binutils) missing"
# lib.sh rebuilds a target when its source changes; these also depend on sym_burn.h.
for t in sym_target sym_dl.so sym_stripped.so; do
  [ "$ROOT/tests/targets/sym_burn.h" -nt "$BUILD/tests/$t" ] && rm -f "$BUILD/tests/$t"
done
build_target sym_target
build_lib sym_dl
build_lib sym_stripped -fno-toplevel-reorder
strip --strip-all -o sym_stripped_s.so "$TBUILD/sym_stripped.so" || fail "strip failed"

python3 - "$TOOL" <<'EOF'
import functools, json, os, random, re, shutil, stat, subprocess, sys, time
import samples
from checks import check, fail, finish, require

tool = sys.argv[1]
TB = os.path.join(os.environ["BUILD"], "tests")
EXE, DL, STRIPPED = os.path.join(TB, "sym_target"), os.path.join(TB, "sym_dl.so"), os.path.abspath("sym_stripped_s.so")


def elf(path):
    """(PT_LOAD segments (offset, vaddr, filesz, memsz, flags), {symbol: (vaddr, size)})"""
    return samples.load_segments(path), samples.symbols(path)


def maps_lines(path, base, inode=None, shown=None):
    segs, _ = elf(path)
    ino = os.stat(path).st_ino if inode is None else inode
    out = []
    for off, vaddr, filesz, memsz, flags in segs:
        s, e = base + (vaddr & ~0xfff), base + ((vaddr + memsz + 0xfff) & ~0xfff)
        perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
        out.append("%x-%x %s %08x fe:00 %d %s" % (s, e, perms, off & ~0xfff, ino, shown or path))
    return out


def vaddr_to_off(path, v):
    for off, vaddr, filesz, memsz, flags in elf(path)[0]:
        if vaddr <= v < vaddr + filesz:
            return v - vaddr + off
    raise ValueError("%#x not in a segment of %s" % (v, path))


# The sample file format is tests/samples.py's: records of 8 frames, 1000 Hz unless said.
record = samples.pack_record
write_bin = functools.partial(samples.write_samples, max_frames=8)


def sym(path, *args):
    return subprocess.run([tool, *args, path], capture_output=True, text=True, errors="replace", timeout=60)


def leftovers(d):
    return [n for n in os.listdir(d) if ".tmp." in n]


# ---------------------------------------------------------------- the good folder
PID = 4242
os.mkdir("good")
segs_exe, S = elf(EXE)
_, SDL = elf(DL)
_, SSTRIP = elf(os.path.join(TB, "sym_stripped.so"))
BASE, BASE_DL, BASE_ST, BASE_SNAP = 0x555500000000, 0x7f1000000000, 0x7f2000000000, 0x7f3000000000
VDSO, HEAP, STACK, JIT, ANON = 0x7ffff7fc1000, 0x555600000000, 0x7ffffffde000, 0x7f4000000000, 0x7f5000000000
tmpl_int = "_Z9tmpl_burnIiEmd"
A = lambda name: BASE + S[name][0]

# A copy replaced since the run, one modified since, one deleted; a FIFO; a device; not ELF.
shutil.copy(DL, "good/victim.so")
victim_inode = os.stat("good/victim.so").st_ino
shutil.copy(DL, "good/victim.new")
os.rename("good/victim.new", "good/victim.so")
shutil.copy(DL, "good/touched.so")
os.mkfifo("good/fifo.so")
with open("good/notelf.so", "w") as f:
    f.write("hello\n" * 100)
t0_wall = time.time() + 1            # every file above is older than the run
os.utime("good/touched.so", (t0_wall + 50, t0_wall + 50))

maps = maps_lines(EXE, BASE) + maps_lines(DL, BASE_DL) + maps_lines(STRIPPED, BASE_ST) + [
    "%x-%x r-xp 00000000 00:00 0 [vdso]" % (VDSO, VDSO + 0x2000),
    "%x-%x rw-p 00000000 00:00 0 [heap]" % (HEAP, HEAP + 0x21000),
    "%x-%x rw-p 00000000 00:00 0 [stack]" % (STACK, STACK + 0x21000),
    "%x-%x rwxp 00000000 00:00 0 " % (JIT, JIT + 0x10000),
    "%x-%x rwxp 00000000 00:00 0" % (ANON, ANON + 0x10000),
]
maps += maps_lines(os.path.abspath("good/victim.so"), 0x7f6000000000, inode=victim_inode)
maps += maps_lines(os.path.abspath("good/touched.so"), 0x7f7000000000)
maps += ["7f8000000000-7f8000010000 r-xp 00001000 fe:00 99 /nonexistent/gone.so (deleted)",
         "7f9000000000-7f9000010000 r-xp 00001000 fe:00 %d %s" % (os.stat("good/fifo.so").st_ino, os.path.abspath("good/fifo.so")),
         "7fa000000000-7fa000010000 r-xp 00001000 00:05 6 /dev/zero",
         "7fb000000000-7fb000010000 r-xp 00001000 fe:00 %d %s" % (os.stat("good/notelf.so").st_ino, os.path.abspath("good/notelf.so"))]
# The second snapshot (t = 5 s): sym_dl.so gone from BASE_SNAP, the executable mapped there.
snap0 = maps + maps_lines(DL, BASE_SNAP)
snap1 = maps + maps_lines(EXE, BASE_SNAP)
with open("good/cpuprof.%d.maps" % PID, "w") as f:
    f.write("\n".join(snap0) + "\n# t=5000000000\n" + "\n".join(snap1) + "\n")
with open("good/perf-%d.map" % PID, "w") as f:
    f.write("%x 100 jit_fn_one\n%x 80 LazyCompile:*foo@bar.js:12\nnot a line\n" % (JIT + 0x100, JIT + 0x400))

# An address in inline_outer whose innermost line (addr2line -i: one file:line per inline level)
# lies in hot_inline's body, the always_inline loop, with inline_outer's line around it.
src = os.path.join(os.environ["ROOT"], "tests/targets/sym_target.cc")
tags = {m: i + 1 for i, l in enumerate(open(src).read().split("\n")) for m in re.findall(r"@sym:(\w+)", l)}
lo, size = S["inline_outer"]
inl_addr = inl_line = None
for a in range(lo, lo + size):
    out = [l.split(" ")[0] for l in subprocess.run(["addr2line", "-i", "-e", EXE, "%x" % a], capture_output=True,
                                                   text=True).stdout.split("\n") if l]
    m = re.match(r"^(.*):(\d+)$", out[0]) if len(out) == 2 else None
    if m and m.group(1) == src and tags["hot_begin"] <= int(m.group(2)) <= tags["hot_end"]:
        inl_addr, inl_line = a, out[0]
        break
if inl_addr is None:
    fail("no address of inline_outer that addr2line places in hot_inline's body (test setup)")
    inl_addr, inl_line = lo, "?"

c_end = S["c_plain"][0] + S["c_plain"][1]      # a return address at the very end of c_plain
strip_off = vaddr_to_off(os.path.join(TB, "sym_stripped.so"), SSTRIP["secret_spin"][0] + 8)
dl_off = vaddr_to_off(DL, SDL["dl_burn"][0] + 4)
s_ = 1_000_000_000
recs = [
    (int(1.5 * s_), 100, "worker-1", [A("c_plain") + 4]),                         # outer
    (int(2.5 * s_), 100, "worker-1", [A(tmpl_int) + 8, BASE + c_end]),           # inner
    (int(2.6 * s_), 101, "worker-2", [BASE + inl_addr]),                          # inner
    (int(3.5 * s_), 101, "worker-2", [BASE_ST + SSTRIP["secret_spin"][0] + 8]),
    (int(0.5 * s_), 100, "worker-1", [VDSO + 0x10, HEAP + 8, STACK + 8]),        # (none)
    (int(0.6 * s_), 100, "worker-1", [JIT + 0x120, JIT + 0x410, ANON + 4, 0x10]),
    (int(0.7 * s_), 100, "worker-1", [0x7f6000000000 + SDL["dl_burn"][0] + 4, 0x7f7000000000 + SDL["dl_burn"][0] + 4]),
    (int(0.8 * s_), 100, "worker-1", [0x7f8000000010, 0x7f9000000010, 0x7fa000000010, 0x7fb000000010]),
    (int(0.9 * s_), 100, "worker-1", [BASE_SNAP + SDL["dl_burn"][0] + 4]),       # snapshot 0: sym_dl.so
    (int(6.0 * s_), 100, "worker-1", [BASE_SNAP + S["c_plain"][0] + 4]),          # snapshot 1: sym_target
    (int(6.1 * s_), 100, "worker-1", []),                                          # empty stack
]
write_bin("good/cpuprof.%d.bin" % PID, recs, dropped=7)
# A second process of the run (a fork child: the same mappings), and the leader's image after an
# exec (cpuprof.<pid>.1: only the executable mapped, at another address): merged, pids kept.
write_bin("good/cpuprof.%d.bin" % (PID + 1), [(int(1.7 * s_), PID + 1, "child", [A("c_plain") + 8])] * 2, hz=500)
shutil.copy("good/cpuprof.%d.maps" % PID, "good/cpuprof.%d.maps" % (PID + 1))
write_bin("good/cpuprof.%d.1.bin" % PID, [(int(6.5 * s_), PID, "exec'd", [0x600000000000 + S["c_plain"][0] + 4])])
with open("good/cpuprof.%d.1.maps" % PID, "w") as f:
    f.write("\n".join(maps_lines(EXE, 0x600000000000)) + "\n")
with open("good/phases.jsonl", "w") as f:
    for t, n, e in ((1, "outer", "begin"), (2, "inner", "begin"), (3, "inner", "end"), (4, "outer", "end")):
        f.write(json.dumps({"t_ns": t * s_, "name": n, "event": e, "attrs": {"tokens": "5"} if e == "end" else {}}) + "\n")
    f.write("{broken\n")
build_id = subprocess.run(["readelf", "-n", EXE], capture_output=True, text=True).stdout
build_id = re.search(r"Build ID: ([0-9a-f]+)", build_id).group(1)
meta = {"schema": "perfscope-meta/1", "pid": PID, "executable": EXE, "build_id": build_id,
        "t0_ns": s_ // 10, "t0_wall_s": t0_wall, "end_ns": 7 * s_}
json.dump(meta, open("good/meta.json", "w"))
with open("good/procs.jsonl", "w") as f:
    f.write(json.dumps({"pid": PID, "ppid": 1, "event": "start", "exe": EXE, "samples": "cpuprof.%d.bin" % PID}) + "\nnot json\n")
with open("good/counters.jsonl", "w") as f:
    for k in range(3):
        f.write(json.dumps({"t_ns": (1 + k) * s_, "rapl": [{"zone": "intel-rapl:0", "name": "package-0", "energy_uj": 1000000 * (k + 1), "max_energy_range_uj": 2 ** 32}],
                            "gpus": [{"index": 0, "power_mw": 50000, "run_mem_mib": 10.5}], "rss_anon_kib": 2048, "rss_anon_by_pid": {str(PID): 2048}}) + "\n")
    f.write("[1,2]\n")

r = sym("good")
print("# good: rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
require(r.returncode == 0, "good folder: exit %d: %s" % (r.returncode, r.stderr))
prof = json.load(open("good/profile.json"))
folded = {}
for l in open("good/stacks.folded"):
    st, _, n = l.rstrip("\n").rpartition(" ")
    folded[st] = folded.get(st, 0) + int(n)
print("# stacks.folded:\n#   " + "\n#   ".join("%s %d" % kv for kv in sorted(folded.items())))


def expect_stack(line, why):
    check(line in folded, "%s: stacks.folded has no line %r" % (why, line))


expect_stack("outer;c_plain", "a function")
expect_stack("inner;c_plain;unsigned long tmpl_burn<int>(double)", "return address at the end of c_plain (looked up at - 1), demangled template")
expect_stack("inner;inline_outer;hot_inline", "inline chain")
expect_stack("outer;sym_stripped_s.so!0x%x" % strip_off, "stripped library")
expect_stack("(none);[stack];[heap];[vdso]", "pseudo regions")
expect_stack("(none);[unknown];[anon];LazyCompile:*foo@bar.js:12;jit_fn_one", "JIT perf map, anonymous, unmapped")
expect_stack("(none);touched.so!0x%x;victim.so!0x%x" % (dl_off, dl_off), "replaced and modified files")
expect_stack("(none);notelf.so!0x1010;zero!0x1010;fifo.so!0x1010;gone.so!0x1010", "unreadable, device, FIFO, deleted")
expect_stack("(none);dl_burn", "snapshot 0")
expect_stack("(none);c_plain", "snapshot 1, and the exec'd image")
check(folded.get("outer;c_plain") == 3 and folded.get("(none);c_plain") == 2,
      "the other process and the exec'd image: outer;c_plain %r (expected 3), (none);c_plain %r (expected 2)"
      % (folded.get("outer;c_plain"), folded.get("(none);c_plain")))
check(sum(folded.values()) == 13 and prof["samples"] == 13 and prof["empty_stacks"] == 1 and prof["dropped"] == 7,
      "totals: folded %d, profile.json samples %s empty %s dropped %s (expected 13, 13, 1, 7)"
      % (sum(folded.values()), prof["samples"], prof["empty_stacks"], prof["dropped"]))
procs = sorted((x["pid"], x["image"], x["samples"]) for x in prof["processes"])
check(procs == [(PID, 0, 10), (PID, 1, 1), (PID + 1, 0, 2)], "processes %r" % procs)
G = prof["groups"]
busy = sorted((b["pid"], b["tid"], b["cpu_s"]) for b in G["outer"]["busiest_threads"])
check(busy == [(PID, 100, 0.001), (PID, 101, 0.001), (PID + 1, PID + 1, 0.004)],
      "outer busiest_threads %r: each sample weighs its own file's period (1 ms, 2 ms)" % busy)
check(prof.get("mixed_rates"), "files at 1000 and 500 Hz: mixed_rates should be true")
for g, n in (("outer", 4), ("inner", 2), ("(none)", 7)):
    check(G.get(g, {}).get("samples") == n,
          "group %s: %s samples, expected %d" % (g, G.get(g, {}).get("samples"), n))
check(G["inner"].get("wall_s") == 1.0 and G["outer"].get("wall_s") == 3.0 and G["outer"].get("tokens") == 5,
      "walls/tokens: inner %r outer %r" % (G["inner"].get("wall_s"), G["outer"]))
hot = [x for x in G["inner"]["self"] if x["name"] == "hot_inline"]
check(hot and hot[0].get("hot_line") == inl_line,
      "hot_inline hot_line %r, addr2line says %s" % (hot and hot[0].get("hot_line"), inl_line))
check([t["name"] for t in G["inner"]["threads"]] == ["worker-#"] and len(G["inner"]["busiest_threads"]) == 2,
      "inner threads %r busiest %r" % (G["inner"]["threads"], G["inner"]["busiest_threads"]))
status = {m["name"]: m["status"] for m in prof["modules"]}
want = {"victim.so": "replaced", "touched.so": "modified", "gone.so": "deleted", "fifo.so": "unreadable",
        "zero": "unreadable", "notelf.so": "unreadable", "sym_target": "ok", "sym_stripped_s.so": "ok"}
for k, v in want.items():
    check(status.get(k) == v, "module %s: status %r, expected %r" % (k, status.get(k), v))
for k in ("victim.so", "touched.so", "gone.so"):
    check(any(k in w for w in prof["warnings"]), "no warning about %s in %r" % (k, prof["warnings"]))
tr = json.load(open("good/trace.json"))
cs = [e for e in tr["traceEvents"] if e.get("ph") == "C" and e["name"] == "power (W)"
      and "package-0 (intel-rapl:0)" in e["args"]]
check(cs and abs(cs[0]["args"]["package-0 (intel-rapl:0)"] - 1.0) <= 1e-6,
      "trace.json power counter %r, expected 1 W from the RAPL deltas" % cs[:1])
check(not leftovers("good"), "good: temporary files left: %s" % leftovers("good"))

# --trust-modified names the modified copy's code.
r = sym("good", "--trust-modified")
check(r.returncode == 0 and "(none);dl_burn;victim.so!0x%x" % dl_off in open("good/stacks.folded").read(),
      "--trust-modified: the modified copy should be symbolized: rc %d %s" % (r.returncode, open("good/stacks.folded").read()))

# The executable's build id differs from the run's: flagged, never named.
os.mkdir("exe_replaced")
shutil.copy("good/cpuprof.%d.bin" % PID, "exe_replaced/")
shutil.copy("good/cpuprof.%d.maps" % PID, "exe_replaced/")
json.dump(dict(meta, build_id="00" * 20), open("exe_replaced/meta.json", "w"))
r = sym("exe_replaced")
txt = open("exe_replaced/stacks.folded").read() if r.returncode == 0 else ""
check(r.returncode == 0 and "outer" not in txt and "c_plain" not in txt and "sym_target!0x" in txt,
      "executable with another build id: rc %d, stacks %r" % (r.returncode, txt[:300]))

# ---------------------------------------------------------------- hostile folders
good_bin = open("good/cpuprof.%d.bin" % PID, "rb").read()
good_maps = open("good/cpuprof.%d.maps" % PID).read()


def case(name, files, want_rc, want=None, samples=None, args=()):
    d = "h_" + name
    os.mkdir(d)
    for fn, data in files.items():
        with open(os.path.join(d, fn), "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    try:
        r = sym(d, *args)
    except subprocess.TimeoutExpired:
        fail("%s: still running after 60 s" % name)
        return
    lines = r.stderr.strip().split("\n") if r.stderr.strip() else []
    print("# %-22s rc %d: %s" % (name, r.returncode, " | ".join(lines)[:300]))
    check(r.returncode == want_rc,
          "%s: exit %d, expected %d: %s" % (name, r.returncode, want_rc, r.stderr[-2000:]))
    check(want_rc != 2 or len(lines) == 1, "%s: %d lines on stderr, expected one" % (name, len(lines)))
    check(not want or re.search(want, r.stderr),
          "%s: stderr %r does not match %r" % (name, r.stderr, want))
    check(want_rc != 2 or not os.path.exists(os.path.join(d, "profile.json")),
          "%s: profile.json written although nothing was usable" % name)
    check(not leftovers(d), "%s: temporary files left: %s" % (name, leftovers(d)))
    if samples is not None and want_rc == 0:
        got = json.load(open(os.path.join(d, "profile.json")))["samples"]
        check(got == samples, "%s: %d samples, expected %d" % (name, got, samples))


B = "cpuprof.%d.bin" % PID
M = "cpuprof.%d.maps" % PID
rec_len = samples.record_size(8)
hdr = lambda count, mf: samples.pack_header(count, 0, mf, 1000)
r = sym("does-not-exist")
check(r.returncode == 2 and len(r.stderr.strip().split("\n")) == 1,
      "missing folder: rc %d stderr %r" % (r.returncode, r.stderr))
r = sym("good/meta.json")
check(r.returncode == 2, "a file for the folder: rc %d" % r.returncode)
case("empty_folder", {}, 2, "no sample files")
# A run whose processes took no sample has no sample file (made with a process's first sample):
# an empty profile, said once.
case("run_without_samples", {"procs.jsonl": json.dumps({"pid": PID, "ppid": 1, "event": "start", "t_ns": 1,
                                                         "exe": EXE, "samples": B}) + "\n",
                             "perfscope.log": ""}, 0, "no process of the run took a sample", samples=0)
case("empty_bin", {B: b""}, 2, "empty")
case("short_header", {B: good_bin[:20]}, 2, "header")
case("bad_magic", {B: b"\x00" * 8 + good_bin[8:]}, 2, "magic")
case("max_frames_0", {B: hdr(1, 0) + b"\x00" * 64}, 2, "max_frames")
case("max_frames_huge", {B: hdr(1, 1 << 40) + b"\x00" * 64}, 2, "max_frames")
case("cut_mid_record", {B: good_bin[:40 + 3 * rec_len + 17], M: good_maps}, 0, "mid-record", samples=3)
case("count_beyond_file", {B: hdr(1000, 8) + good_bin[40:40 + 2 * rec_len], M: good_maps}, 0, "1000", samples=2)
case("nframes_over_max", {B: hdr(1, 8) + record(5, 1, "x", [A("c_plain")] * 8, 8, nframes=1 << 30), M: good_maps}, 0, "clamped", samples=1)
case("no_maps", {B: good_bin}, 0, "maps", samples=10)
case("garbage_maps", {B: good_bin, M: bytes(random.Random(1).randrange(256) for _ in range(5000))}, 0, None, samples=10)
case("broken_phases", {B: good_bin, M: good_maps, "phases.jsonl": "x\n{\n[]\n"}, 0, "phases", samples=10)
case("garbage_meta", {B: good_bin, M: good_maps, "meta.json": "{\"t0_ns\": [", "procs.jsonl": "\x00\x01\n{}\n",
                      "counters.jsonl": "{\"t_ns\":\"x\",\"rapl\":7}\n{\"t_ns\":1,\"rapl\":[{\"zone\":5}],\"gpus\":{}}\n"}, 0, "meta", samples=10)
# A wall clock no int64 of nanoseconds holds (found by make fuzz: pprof's time_nanos was cast from
# it, undefined behaviour): unknown, as runmeta.h says, so profile.pb.gz has no time_nanos.
case("wall_clock_out_of_range", {B: good_bin, M: good_maps, "meta.json": json.dumps(
    {"schema": "perfscope-meta/1", "t0_ns": 1, "t0_wall_s": 1e308, "end_ns": 9 * s_})}, 0, None, samples=10)
if os.path.exists("h_wall_clock_out_of_range/profile.pb.gz"):
    import gzip
    pb, i, top = gzip.open("h_wall_clock_out_of_range/profile.pb.gz").read(), 0, {}

    def pb_varint(i):
        v = s = 0
        while True:
            b = pb[i]
            v |= (b & 0x7f) << s
            i, s = i + 1, s + 7
            if b < 0x80:
                return v, i
    while i < len(pb):  # the Profile message's top-level fields: number -> last varint value
        key, i = pb_varint(i)
        if key & 7 == 0:
            top[key >> 3], i = pb_varint(i)
        elif key & 7 == 2:
            n, i = pb_varint(i)
            i += n
        else:
            fail("profile.pb.gz: wire type %d" % (key & 7))
            break
    check(9 not in top, "t0_wall_s 1e308: profile.pb.gz time_nanos %r, expected none" % top.get(9))
case("garbage_perfmap", {B: good_bin, M: good_maps, "perf-%d.map" % PID: "zzz\n" * 10}, 0, "perf-", samples=10)
case("hostile_records", {B: hdr(3, 8) + record(0, 0xffffffff, "\x01\x02\x1b[31m", [0xffffffffffffffff] * 8, 8)
                         + record(0xffffffffffffffff, 7, "", [0, 1, 2], 8) + record(5, 7, "a;b\nc", [A("c_plain")], 8),
                         M: good_maps, "phases.jsonl": "{\"t_ns\":18446744073709551615,\"name\":\"x\",\"event\":\"begin\"}\n"}, 0, None, samples=3)
case("one_bad_one_good", {B: good_bin, M: good_maps, "cpuprof.7.bin": b"junk"}, 0, "cpuprof.7.bin", samples=10)
case("all_bad", {"cpuprof.7.bin": b"junk", "cpuprof.8.1.bin": hdr(0, 300)}, 2, "cpuprof")
case("bad_usage", {B: good_bin}, 2, "usage", args=("--top", "0"))

# Random corruption of a good folder's .bin and .maps: exit 0 or 2, nothing left behind.
rng = random.Random(7)
for k in range(25):
    b, m = bytearray(good_bin), bytearray(good_maps.encode())
    for _ in range(rng.randrange(1, 20)):
        b[rng.randrange(len(b))] = rng.randrange(256)
        m[rng.randrange(len(m))] = rng.randrange(256)
    b = b[:rng.randrange(len(b) + 1)] if k % 3 == 0 else b
    d = "fuzz%d" % k
    os.mkdir(d)
    open(os.path.join(d, B), "wb").write(bytes(b))
    open(os.path.join(d, M), "wb").write(bytes(m))
    r = sym(d)
    if r.returncode not in (0, 2) or (r.returncode == 2 and len(r.stderr.strip().split("\n")) != 1) or leftovers(d):
        fail("corrupted folder %d: rc %d stderr %r" % (k, r.returncode, r.stderr[-1500:]))
        break

finish()
EOF
