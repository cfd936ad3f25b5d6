#!/usr/bin/env bash
# t_tools_symbolize_go: $TOOLS/perfscope-symbolize on a cgo-linked Go program (tests/targets/e_cgo.go;
# issue 8, defect 12). gcc links such a binary with a .debug_aranges that lists only the C
# compilation units; libdwfl then took the nearest C unit below every Go address, and every Go
# function was given /_/runtime/cgo/gcc_mmap.c:37 where addr2line says e_cgo.go:31.
# - synthetic folder: one sample at each of a few addresses of main.goBurn, main.main and the C
#   function (c_burn, inlined in cgo's wrapper), each in a phase of its own: every phase's hot
#   line and innermost function are what `addr2line -f` says for that address;
# - end to end: e_cgo under the shim; main.goBurn's hot line is a line of goBurn in e_cgo.go.
# Skipped, in one line, where go is not installed. Checks as tests/checks.py.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-symbolize
command -v go >/dev/null || skip "go is not installed: no cgo binary to symbolize (apt-get install golang-go)"
command -v addr2line >/dev/null || skip "addr2line (binutils) missing"
src=$ROOT/tests/targets/e_cgo.go
exe=$TBUILD/e_cgo
mkdir -p "$TBUILD"
if [ ! -x "$exe" ] || [ "$src" -nt "$exe" ]; then
    # Its own cache and module path under build/: nothing written to $HOME, nothing fetched.
    mkdir -p "$TBUILD/e_cgo.d"
    ( cd "$TBUILD/e_cgo.d" && cp "$src" e_cgo.go && \
      CGO_ENABLED=1 GOCACHE=$TBUILD/go-cache GOPATH=$TBUILD/go-path GOFLAGS= GO111MODULE=auto \
      GOPROXY=off go build -o "$exe.tmp" e_cgo.go ) || fail "cannot build $src with go (CGO_ENABLED=1)"
    mv -f "$exe.tmp" "$exe"
fi

python3 - "$TOOL" "$exe" <<'EOF'
import json, os, re, subprocess, sys
import samples
from checks import check, fail, finish, require
from shimlib import run, shim_env, expect_ok, info

tool, exe = sys.argv[1], sys.argv[2]
S = samples.symbols(exe)
go_fn, main_fn = "main.goBurn", "main.main"
c_fn = next((n for n in S if n.startswith("_cgo_") and n.endswith("_Cfunc_c_burn")), None)
require(go_fn in S and main_fn in S and c_fn, "e_cgo lacks %s, %s or the C function: %s"
        % (go_fn, main_fn, sorted(n for n in S if "urn" in n)))
segs = samples.load_segments(exe)


def addr2line(addrs):
    """{address: (innermost function, file:line)}, as addr2line -f says."""
    out = subprocess.run(["addr2line", "-f", "-e", exe] + ["%x" % a for a in addrs], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return {a: (out[2 * i], out[2 * i + 1]) for i, a in enumerate(addrs)}


def pick(fn, k, in_file=None):
    """k addresses of fn that addr2line places on k different lines (a known file; in_file's
    when given)."""
    lo, size = S[fn]
    lines, got = addr2line(list(range(lo, lo + size))), []
    seen = set()
    for a in sorted(lines):
        name, l = lines[a]
        if l.startswith("??") or l.endswith(":0") or l in seen or (in_file and in_file not in l):
            continue
        seen.add(l)
        got.append((a, name, l))
        if len(got) == k:
            break
    return got


# ---------------------------------------------------------------- the synthetic folder
# The C function's own lines (c_burn inlined, from the cgo preamble in e_cgo.go): binutils 2.40's
# addr2line names the lines of cgo's generated wrapper code "e_cgo.cgo2.c" where readelf's decoded
# line table and llvm-symbolizer say "cgo-gcc-prolog", as we do.
want = pick(go_fn, 4) + pick(main_fn, 2) + pick(c_fn, 2, "e_cgo.go:")
check(sum(1 for a, fn, l in want if fn == go_fn and "e_cgo.go:" in l) >= 2 and
      sum(1 for a, fn, l in want if fn == "c_burn") >= 1,
      "test setup: addr2line places too few addresses of %s and %s in e_cgo.go: %r" % (go_fn, c_fn, want))
PID, s_ = 5151, 1_000_000_000
os.mkdir("syn")
maps = []
for off, vaddr, filesz, memsz, flags in segs:
    perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
    maps.append("%x-%x %s %08x fe:00 %d %s" % (vaddr & ~0xfff, (vaddr + memsz + 0xfff) & ~0xfff, perms,
                                                off & ~0xfff, os.stat(exe).st_ino, exe))
with open("syn/cpuprof.%d.maps" % PID, "w") as f:
    f.write("\n".join(maps) + "\n")
recs, phases = [], []
for i, (a, fn, l) in enumerate(want):
    t = (i + 1) * s_
    recs.append((t + s_ // 2, PID, "e_cgo", [a]))
    phases += [{"t_ns": t, "name": "a%d" % i, "event": "begin", "attrs": {}},
               {"t_ns": t + s_ - 1, "name": "a%d" % i, "event": "end", "attrs": {}}]
samples.write_samples("syn/cpuprof.%d.bin" % PID, recs, max_frames=8)
with open("syn/phases.jsonl", "w") as f:
    f.write("".join(json.dumps(p) + "\n" for p in phases))
json.dump({"schema": "perfscope-meta/1", "pid": PID, "executable": exe, "t0_ns": s_ // 2,
           "end_ns": (len(want) + 2) * s_}, open("syn/meta.json", "w"))
r = subprocess.run([tool, "syn"], capture_output=True, text=True, timeout=120)
info("synthetic: rc %d %s%s" % (r.returncode, r.stdout, r.stderr))
require(r.returncode == 0, "perfscope-symbolize syn: exit %d" % r.returncode)
G = json.load(open("syn/profile.json"))["groups"]
for i, (a, fn, l) in enumerate(want):
    top = G.get("a%d" % i, {}).get("self", [{}])[0]
    info("%#x: %s %s (addr2line %s)" % (a, top.get("name"), top.get("hot_line"), l))
    check(top.get("name") == fn, "%#x: named %r, addr2line says %s" % (a, top.get("name"), fn))
    check(top.get("hot_line") == l, "%#x (%s): line %r, addr2line says %s" % (a, fn, top.get("hot_line"), l))

# ---------------------------------------------------------------- end to end under the shim
res = run([exe, "0.3"], shim_env("out", HZ=199), what="e_cgo")
expect_ok(res, "e_cgo under the shim")
check(res.stdout == b"e_cgo true true\n", "e_cgo's output %r" % res.stdout)
r = subprocess.run([tool, "out"], capture_output=True, text=True, timeout=120)
info("end to end: rc %d %s%s" % (r.returncode, r.stdout, r.stderr))
require(r.returncode == 0, "perfscope-symbolize out: exit %d" % r.returncode)
self_ = {x["name"]: x for x in json.load(open("out/profile.json"))["groups"]["(none)"]["self"]}
g = self_.get(go_fn)
require(g and g.get("samples", 0) >= 5, "%s: %r samples of 0.3 s at 199 Hz" % (go_fn, g and g.get("samples")))
lo, size = S[go_fn]
body = {l for _, l in addr2line(list(range(lo, lo + size))).values() if "e_cgo.go:" in l}
check(g.get("hot_line") in body, "%s's hot line %r is none of its own lines %s" % (go_fn, g.get("hot_line"), sorted(body)))
check((g.get("source") or "").endswith("e_cgo.go"), "%s's source %r" % (go_fn, g.get("source")))
finish()
EOF
