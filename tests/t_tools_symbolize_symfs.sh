#!/usr/bin/env bash
# t_tools_symbolize_symfs: the symbolizer's --symfs DIR (docs/symbolize.md), on a host run of
# tests/targets/c_engine.c, no container needed:
# - --symfs with the executable and libc copied under it at their paths: both named from the
#   copies (the copy's inode and mtime are its own, never compared);
# - --symfs empty: the executable still resolves from the host (its build id matches meta.json's),
#   libc does not (no build id of the run's to check the host's file against): flagged missing,
#   its frames unnamed, never misnamed;
# - OUT/symfs is the default when present; a copy whose build id differs from meta.json's is
#   refused as replaced.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-symbolize
build_target c_engine
LD_PRELOAD=$SHIM PERFSCOPE_OUT=$PWD/out LLMPERFSCOPE_MARKERS=$PWD/out/markers "$TBUILD/c_engine" >/dev/null
check "the engine exits 7" [ $? -eq 7 ]
libc=$(awk '$6 ~ /\/libc\.so/ {print $6; exit}' out/cpuprof.*.maps)
check "libc in the maps" [ -n "$libc" ]
mkdir -p copy"$(dirname "$TBUILD/c_engine")" copy"$(dirname "$libc")" empty
cp "$TBUILD/c_engine" copy"$TBUILD/c_engine"
cp "$libc" copy"$libc"
"$TOOL" --symfs "$PWD/copy" out >copy.log 2>&1 || bad "symbolize --symfs copy: $(cat copy.log)"
cp out/profile.json copy.json
"$TOOL" --symfs "$PWD/empty" out >empty.log 2>&1 || bad "symbolize --symfs empty: $(cat empty.log)"
cp out/profile.json empty.json
# OUT/symfs by default: an executable of another build there is refused.
mkdir -p out/symfs"$(dirname "$TBUILD/c_engine")"
cp "$TBUILD/c_engine" out/symfs"$TBUILD/c_engine"
objcopy --remove-section .note.gnu.build-id --add-section .note.gnu.build-id=/dev/null \
  out/symfs"$TBUILD/c_engine" 2>/dev/null || printf 'x' >>out/symfs"$TBUILD/c_engine"
"$TOOL" out >default.log 2>&1 || bad "symbolize with OUT/symfs: $(cat default.log)"
cp out/profile.json default.json

py_check symfs - "$TBUILD/c_engine" "$libc" <<'EOF'
import json, sys
from checks import check, finish

exe, libc = sys.argv[1], sys.argv[2]
def mods(f):
    return {m.get("path"): m for m in json.load(open(f))["modules"] if m.get("path")}
def named(f, fn):
    return fn in json.dumps(json.load(open(f)))
c = mods("copy.json")
check(c.get(exe, {}).get("status") == "ok" and c.get(libc, {}).get("status") == "ok",
      "from the copies: %s %s" % (c.get(exe), c.get(libc)))
check(named("copy.json", "burn_decode"), "burn_decode named from the copy")
e = mods("empty.json")
check(e.get(exe, {}).get("status") == "ok", "the executable from the host, build id matching: %s" % e.get(exe))
check(e.get(libc, {}).get("status") == "missing" and "build id" in e.get(libc, {}).get("why", ""),
      "libc not under the symfs: %s" % e.get(libc))
check(named("empty.json", "burn_load"), "burn_load still named")
d = mods("default.json")
check(d.get(exe, {}).get("status") == "replaced", "OUT/symfs by default, another build refused: %s" % d.get(exe))
finish()
EOF
checks_done
