#!/usr/bin/env bash
# t_tools_symbolize_debugcache: the symbolizer's cache of inflated debug files
# (symbolize/debugcache.c, docs/symbolize.md "Debug info cache"), on a run folder written here
# by hand whose frames lie in tests/targets/sym_cache.c's functions, in a copy of that library
# whose DWARF is only in a separate debug file with compressed sections, found by its
# .gnu_debuglink:
# - PERFSCOPE_DEBUG_CACHE=0: no cache folder is made; the functions get their source lines;
# - an empty cache: the outputs are byte for byte those without a cache, and the cache holds
#   <build id>.debug with the same build id, no compressed section left, every other section's
#   bytes as in the debug file, in a folder of mode 0700;
# - the separate debug file taken away: the lines still come (from the copy), and without the
#   cache they do not (so the copy is what was read);
# - a copy cut in half, one without .debug_info, one whose .debug_info runs past the end of the
#   file, one still compressed, another library's debug file put under the name: never used
#   (the outputs are as without a cache, or without lines when the debug file is away), and the
#   copy is written anew;
# - a debug file whose compressed section asks for 1 GiB alignment is not copied;
# - a cache folder others may write into is neither read nor written; a folder under a copy's
#   name stays, and no temporary file is left;
# - a debug file with a .gnu_debugaltlink (dwz) is never copied;
# - a cache that cannot be written (a file where the folder should be): the same outputs, exit 0;
# - with libc6-dbg installed, libc's debug file, which libdwfl finds by build id, is copied too
#   and the copy gives the same outputs.
# $TOOLS/perfscope-symbolize, so `make test-asan` runs it under ASan/UBSan.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-symbolize
for t in nm objcopy readelf; do command -v $t >/dev/null || skip "$t missing (binutils)"; done
build_lib sym_cache -O0
mkdir lib
cp "$TBUILD/sym_cache.so" lib/libsc.so
(cd lib && objcopy --only-keep-debug --compress-debug-sections=zlib libsc.so libsc.so.debug &&
  objcopy --strip-debug --add-gnu-debuglink=libsc.so.debug libsc.so) || fail "objcopy could not split the debug info"
check "the debug file's sections are compressed" sh -c "readelf -S -W lib/libsc.so.debug | grep -q '\.debug_info .* C '"
check "the library has no DWARF of its own" sh -c "! readelf -S -W lib/libsc.so | grep -q '\.debug_info'"
# A second build of the library (another build id) whose debug file names a dwz alternate file.
_build "$TBUILD/sym_cache_dz.so" "$ROOT/tests/targets/sym_cache.c" "${CC:-gcc}" -shared -fPIC -O1
cp "$TBUILD/sym_cache_dz.so" lib/libdz.so
printf 'dz.alt\0aaaaaaaaaaaaaaaaaaaa' >lib/altlink.bin
(cd lib && objcopy --only-keep-debug --compress-debug-sections=zlib libdz.so libdz.so.debug &&
  objcopy --add-section .gnu_debugaltlink=altlink.bin libdz.so.debug &&
  objcopy --strip-debug --add-gnu-debuglink=libdz.so.debug libdz.so) || fail "objcopy could not make the dwz case"
# Another library's debug file (for the wrong-build-id copy).
(cd lib && objcopy --only-keep-debug "$TBUILD/sym_cache.so" other.debug 2>/dev/null &&
  objcopy --remove-section .note.gnu.build-id other.debug 2>/dev/null &&
  objcopy --add-section .note.gnu.build-id=/dev/null other.debug 2>/dev/null) || true

python3 - "$TOOL" "$PWD/lib/libsc.so" "$PWD/lib/libdz.so" <<'EOF'
import gzip, json, os, shutil, struct, subprocess, sys
import samples
from checks import check, require, finish

tool, lib, dz = sys.argv[1], sys.argv[2], sys.argv[3]
syms = samples.symbols(lib)
require(all(n in syms for n in ("sc_fa", "sc_fb", "sc_fc")), "libsc.so lacks its functions: %r" % sorted(syms))
libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
if not os.path.exists(libc):
    libc = None

def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split()[-1]
    return None

lib_id = build_id(lib)
require(lib_id, "libsc.so has no build id")
libc_id = build_id(libc) if libc else None
libc_dbg = libc_id and os.path.exists("/usr/lib/debug/.build-id/%s/%s.debug" % (libc_id[:2], libc_id[2:]))

maps, frames = [], []
def map_file(path, at):
    for off, vaddr, filesz, memsz, flags in samples.load_segments(path):
        s, e = at + (vaddr & ~0xfff), at + ((vaddr + memsz + 0xfff) & ~0xfff)
        perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
        maps.append("%x-%x %s %08x fe:00 %d %s" % (s, e, perms, off & ~0xfff, os.stat(path).st_ino, path))
base = 0x7f1200000000
map_file(lib, base)
fa, fb, fc = (base + syms[n][0] for n in ("sc_fa", "sc_fb", "sc_fc"))
stacks = [[fa + 1, fb + 4], [fc + 2, fb + 4], [fb + 1]]
dzbase = 0x7f2300000000
map_file(dz, dzbase)
stacks.append([dzbase + samples.symbols(dz)["sc_fa"][0] + 1])
if libc_dbg:
    cbase = 0x7f3400000000
    map_file(libc, cbase)
    out = subprocess.run(["nm", "-D", "-S", "--defined-only", libc], capture_output=True, text=True).stdout
    dyn = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] == "T":
            dyn[p[3].split("@")[0]] = int(p[0], 16)
    stacks += [[cbase + dyn[n] + 8, fb + 4] for n in ("malloc", "qsort") if n in dyn]
recs = [(10**9 + i * 10**6, 100 + i % 2, "th", stacks[i % len(stacks)]) for i in range(300)]
os.mkdir("run")
with open("run/cpuprof.4242.maps", "w") as f:
    f.write("\n".join(maps) + "\n")
samples.write_samples("run/cpuprof.4242.bin", recs, 16)

OUTS = ("profile.json", "stacks.folded", "flame.json", "trace.json")
def symbolize(cache, label):
    env = dict(os.environ, PERFSCOPE_DEBUG_CACHE=cache)
    res = subprocess.run([tool, "run"], capture_output=True, text=True, env=env)
    check(res.returncode == 0, "%s: exit %d: %s" % (label, res.returncode, res.stderr[-400:]))
    got = {n: open("run/" + n, "rb").read() for n in OUTS}
    got["profile.pb"] = gzip.decompress(open("run/profile.pb.gz", "rb").read())
    return got

def sources(out):
    """{name: source} of the self rows of libsc.so (libdz.so has functions of the same names),
    of libc and of the unnamed."""
    prof = json.loads(out["profile.json"])
    rows = [r for g in prof["groups"].values() for r in g.get("self", [])]
    return {r["name"]: r.get("source") for r in rows if r.get("module") != "libdz.so"}

def same(a, b, label):
    diff = [n for n in a if a[n] != b[n]]
    check(not diff, "%s: outputs differ from those without a cache: %s" % (label, diff))

def compressed_sections(path):
    """The .debug_* sections whose flags hold C (SHF_COMPRESSED), from readelf -S -W."""
    import re
    out = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+([A-Za-z]*)\s+\d+\s+\d+\s+\d+\s*$", line)
        if m and m.group(1).startswith(".debug_") and "C" in m.group(2):
            found.append(m.group(1))
    return found

def section_headers(path):
    """[(name, offset of its header in the file, sh_offset, sh_size)] of a 64-bit LSB ELF file."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    def hdr(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = hdr(shstrndx)
    out = []
    for i in range(shnum):
        h = hdr(i)
        name = data[strtab[4] + h[0]:data.index(b"\0", strtab[4] + h[0])].decode()
        out.append((name, shoff + i * shentsize, h[4], h[5], h[1]))
    return out

def sections_bytes(path):
    data = open(path, "rb").read()
    return {n: data[o:o + z] for n, _, o, z, t in section_headers(path) if t != 8 and z}  # 8: NOBITS

ref = symbolize("0", "no cache")
check(not os.path.exists("0") and not os.path.exists("cache"), "PERFSCOPE_DEBUG_CACHE=0 made no folder")
src = sources(ref)
check(all(src.get(n) and "sym_cache.c" in src[n] for n in ("sc_fa", "sc_fc", "sc_fb")),
      "the functions' lines come from the separate debug file: %r" % src)
if libc_dbg:
    check(any(src.get(n) for n in ("malloc", "__libc_malloc", "qsort")), "libc's lines from libc6-dbg: %r" % src)

copy = "cache/%s.debug" % lib_id
same(ref, symbolize("cache", "empty cache"), "empty cache")
check(os.path.isfile(copy), "the copy %s was written: %r" % (copy, os.listdir("cache") if os.path.isdir("cache") else None))
if os.path.isfile(copy):
    check(build_id(copy) == lib_id, "the copy has the library's build id")
    check(compressed_sections(copy) == [], "no compressed section in the copy: %r" % compressed_sections(copy))
    check(os.stat("cache").st_mode & 0o777 == 0o700, "the cache folder is the user's own (0700)")
    mine = sections_bytes(copy)
    theirs = sections_bytes("lib/libsc.so.debug")
    same_rest = [n for n in theirs if not n.startswith(".debug_") and theirs[n] != mine.get(n)]
    check(theirs and not same_rest, "the copy's other sections are the debug file's, byte for byte: %r" % same_rest)
    check(mine.get(".debug_info") and len(mine[".debug_info"]) > len(theirs[".debug_info"]),
          "the copy's .debug_info is inflated")
dzid = build_id(dz)
check(dzid and dzid != lib_id and not os.path.exists("cache/%s.debug" % dzid), "a debug file with a dwz link is not copied")
check(not [f for f in os.listdir("cache") if ".tmp." in f], "no temporary file left: %r" % os.listdir("cache"))

# The copy is what serves: the separate debug file taken away.
os.rename("lib/libsc.so.debug", "lib/away.debug")
same(ref, symbolize("cache", "debug file away, cache warm"), "debug file away, cache warm")
gone = sources(symbolize("0", "debug file away, no cache"))
check(not any(gone.get(n) for n in ("sc_fa", "sc_fc")), "without the cache and the debug file no line: %r" % gone)
os.rename("lib/away.debug", "lib/libsc.so.debug")

# A copy cut in half is never read, and is written anew.
size = os.path.getsize(copy)
with open(copy, "r+b") as f:
    f.truncate(size // 2)
same(ref, symbolize("cache", "copy cut in half"), "copy cut in half")
check(os.path.getsize(copy) == size, "the cut copy was written anew: %d of %d bytes" % (os.path.getsize(copy), size))

# Copies the run must refuse and write anew: without .debug_info, .debug_info past the end of
# the file, still compressed (the debug file itself under the name).
good = open(copy, "rb").read()
def refused(label, bad, rewritten):
    with open(copy, "wb") as f:
        f.write(bad)
    os.rename("lib/libsc.so.debug", "lib/away.debug")
    gone = sources(symbolize("cache", label + ", debug file away"))
    check(not any(gone.get(n) for n in ("sc_fa", "sc_fc")), "%s: never read: %r" % (label, gone))
    os.rename("lib/away.debug", "lib/libsc.so.debug")
    same(ref, symbolize("cache", label), label)
    check(rewritten(), "%s: the copy was written anew" % label)
    check(open(copy, "rb").read() == good, "%s: the new copy is as the first" % label)
subprocess.run(["objcopy", "--remove-section", ".debug_info", copy, "noinfo.debug"], check=True)
refused("a copy without .debug_info", open("noinfo.debug", "rb").read(),
        lambda: ".debug_info" in sections_bytes(copy))
past = bytearray(good)
for name, at, off, size, _ in section_headers(copy):
    if name == ".debug_info":
        struct.pack_into("<Q", past, at + 32, len(good) - off + 4096)
refused("a copy whose .debug_info runs past its end", bytes(past), lambda: open(copy, "rb").read() == good)
refused("a copy still compressed", open("lib/libsc.so.debug", "rb").read(),
        lambda: compressed_sections(copy) == [])

# A debug file whose compressed .debug_info asks for 1 GiB alignment (the gap before it would be
# written out as zeros): not copied.
orig = open("lib/libsc.so.debug", "rb").read()
hostile = bytearray(orig)
for name, at, off, size, _ in section_headers("lib/libsc.so.debug"):
    if name == ".debug_info":
        struct.pack_into("<Q", hostile, off + 16, 1 << 30)   # Elf64_Chdr.ch_addralign
with open("lib/libsc.so.debug", "wb") as f:
    f.write(hostile)
os.makedirs("align", mode=0o700)
symbolize("align", "a debug file asking for 1 GiB alignment")
check(not os.path.exists("align/%s.debug" % lib_id), "a debug file asking for 1 GiB alignment is not copied: %r"
      % [(f, os.path.getsize("align/" + f)) for f in os.listdir("align")])
with open("lib/libsc.so.debug", "wb") as f:
    f.write(orig)

# A folder others may write into: neither read nor written.
os.makedirs("shared")
shutil.copyfile(copy, "shared/" + os.path.basename(copy))
os.chmod("shared", 0o777)
os.rename("lib/libsc.so.debug", "lib/away.debug")
shared = sources(symbolize("shared", "a folder others may write into"))
check(not any(shared.get(n) for n in ("sc_fa", "sc_fc")), "a copy in a folder others may write into is never read: %r" % shared)
os.rename("lib/away.debug", "lib/libsc.so.debug")
symbolize("shared", "a folder others may write into, debug file back")
check(os.listdir("shared") == [os.path.basename(copy)], "nothing written into it: %r" % os.listdir("shared"))

# A folder under a copy's name stays, and nothing is left beside it.
os.makedirs("dirname/%s.debug" % lib_id)
os.chmod("dirname", 0o700)
same(ref, symbolize("dirname", "a folder under the copy's name"), "a folder under the copy's name")
check(os.path.isdir("dirname/%s.debug" % lib_id), "the folder under the copy's name stays")
check(not [f for f in os.listdir("dirname") if ".tmp." in f], "no temporary file left: %r" % os.listdir("dirname"))

# Another library's debug file under the name: its build id differs, never used.
if os.path.exists("lib/other.debug"):
    shutil.copyfile("lib/other.debug", copy)
    os.rename("lib/libsc.so.debug", "lib/away.debug")
    wrong = sources(symbolize("cache", "another file under the name"))
    check(not any(wrong.get(n) for n in ("sc_fa", "sc_fc")), "a file of another build id is never read: %r" % wrong)
    os.rename("lib/away.debug", "lib/libsc.so.debug")
    same(ref, symbolize("cache", "after the wrong file"), "after the wrong file")
    check(build_id(copy) == lib_id, "the wrong file was replaced by the copy")

# A cache that cannot be written.
open("notadir", "w").close()
same(ref, symbolize("notadir/debug", "unwritable cache"), "unwritable cache")

if libc_dbg:
    check(os.path.isfile("cache/%s.debug" % libc_id), "libc's debug file (found by build id) was copied: %r" % os.listdir("cache"))
    same(ref, symbolize("cache", "libc from the copy"), "libc from the copy")
else:
    print("# libc6-dbg not installed: the build-id path (libc's debug file) is not checked")
finish()
EOF
check "the cache checks" [ $? -eq 0 ]
checks_done
