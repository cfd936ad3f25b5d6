#!/usr/bin/env bash
# t_tools_install: `make install` and `make uninstall` (scripts/install.sh, docs/install.md).
# - Into a DESTDIR (PREFIX=/opt/perfscope): exactly the expected files, executables executable;
#   perfscope.pc read through PKG_CONFIG_SYSROOT_DIR names the staged header and no library; every
#   man page renders without a warning (man --warnings, groff -ww); uninstall leaves DESTDIR empty.
# - Into PREFIX=$tmp/usr (no DESTDIR), over folders that already hold files of someone else's: a C
#   and a C++ program built with `pkg-config --cflags --libs perfscope` alone, run under the
#   installed perfscope record (PERFSCOPE_SHIM unset, no shim beside it: the installed
#   PREFIX/lib/perfscope/libperfscope.so is the one mapped), record their perfscope.h phases; the
#   installed Python module marks a phase inside a `with` block; uninstall removes our files and
#   the folders install created, and leaves the other files and the folders that were there.
# The tools installed are $BUILD's (make install's); under make test-asan this checks the same.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in perfscope perfscope-report perfscope-symbolize; do
  [ -x "$BUILD/$t" ] || fail "$BUILD/$t is not built (make)"
done
command -v pkg-config >/dev/null || fail "pkg-config is missing (apt-get install pkg-config)"
command -v man >/dev/null || command -v groff >/dev/null || fail "neither man nor groff: apt-get install man-db"
unset PERFSCOPE_SHIM PERFSCOPE_MARKERS LLMPERFSCOPE_MARKERS PKG_CONFIG_SYSROOT_DIR
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
tmp=$PWD

mk() { make -s -C "$ROOT" "$@" >"$tmp/make.out" 2>&1 || { cat "$tmp/make.out"; return 1; }; }

# The files an installation holds, relative to PREFIX.
expected() {
  printf '%s\n' bin/perfscope bin/perfscope-report bin/perfscope-symbolize \
    lib/perfscope/libperfscope.so lib/perfscope/install-manifest include/perfscope.h \
    lib/pkgconfig/perfscope.pc share/perfscope/python/perfscope_markers.py
  for p in "$BUILD"/container/*; do   # the container shim folder (docs/containers.md)
    echo "lib/perfscope/container/${p##*/}"
  done
  for p in perfscope perfscope-record perfscope-mark perfscope-report perfscope-symbolize \
           perfscope-diff perfscope-matrix; do
    echo "share/man/man1/$p.1"
  done
}

# ---- 1. into a DESTDIR ----
stage=$tmp/stage pre=/opt/perfscope
mk install PREFIX=$pre DESTDIR="$stage" || fail "make install DESTDIR=$stage PREFIX=$pre failed"
got=$(cd "$stage$pre" && find . -type f -o -type l | sed 's|^\./||' | sort)
want=$(expected | sort)
check "installed files:
$got
expected:
$want" [ "$got" = "$want" ]
for t in perfscope perfscope-report perfscope-symbolize; do
  check "$pre/bin/$t is not executable" [ -x "$stage$pre/bin/$t" ]
done
check "the installed perfscope --version: $("$stage$pre/bin/perfscope" --version 2>&1)" \
  sh -c "'$stage$pre/bin/perfscope' --version | grep -q '^perfscope [0-9]'"
cflags=$(PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$stage$pre/lib/pkgconfig pkg-config --cflags perfscope 2>&1)
libs=$(PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$stage$pre/lib/pkgconfig pkg-config --libs perfscope 2>&1)
check "pkg-config --cflags perfscope (sysroot $stage): '$cflags', expected -I$stage$pre/include" \
  [ "$(echo $cflags)" = "-I$stage$pre/include" ]
check "pkg-config --libs perfscope: '$libs', expected nothing (the header links nothing)" [ -z "$(echo $libs)" ]
check "perfscope.pc's prefix is PREFIX, not DESTDIR: $(grep '^prefix=' "$stage$pre/lib/pkgconfig/perfscope.pc")" \
  grep -qx "prefix=$pre" "$stage$pre/lib/pkgconfig/perfscope.pc"
for page in "$stage$pre"/share/man/man1/*.1; do
  name=$(basename "$page")
  if command -v man >/dev/null; then
    warn=$(MANROFFSEQ='' MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    check "man -l $name: warnings: $warn" [ -z "$warn" ]
    text=$(MANWIDTH=80 man -l "$page" 2>/dev/null)
    check "man -l $name renders no NAME section" grep -q '^NAME' <<<"$text"
  fi
  if command -v groff >/dev/null; then
    warn=$(groff -man -ww -z "$page" 2>&1)
    check "groff -man -ww $name: $warn" [ -z "$warn" ]
  fi
done
mk uninstall PREFIX=$pre DESTDIR="$stage" || bad "make uninstall DESTDIR=$stage failed"
left=$(cd "$stage" && find . -mindepth 1 | sort)
check "make uninstall left in DESTDIR: $left" [ -z "$left" ]

# ---- 2. into PREFIX=$tmp/usr, over folders that hold other files ----
pre=$tmp/usr
mkdir -p "$pre/bin" "$pre/share/man/man1"
echo theirs >"$pre/bin/other-tool"
echo theirs >"$pre/share/man/man1/other.1"
before=$(cd "$pre" && find . | sort)
mk install PREFIX="$pre" || fail "make install PREFIX=$pre failed"
[ ! -e "$pre/bin/libperfscope.so" ] || fail "a shim beside the installed perfscope: the test would not show the lib/perfscope one is found"
export PKG_CONFIG_PATH=$pre/lib/pkgconfig
pc=$(pkg-config --cflags --libs perfscope) || fail "pkg-config --cflags --libs perfscope failed"

# The program: two phases through perfscope.h, then the path of the shim it has mapped on stdout.
cat >prog.c <<'EOF'
#include <perfscope.h>
#include <stdio.h>
#include <string.h>
static volatile double sink;
static void work(long n) { for (long i = 0; i < n; i++) sink += (double)i * 0.5; }
int main(void)
{
    perfscope_begin("load");
    work(20000000);
    perfscope_end("load", -1);
    perfscope_begin("decode");
    work(40000000);
    perfscope_end("decode", 64);
    char line[4096];
    FILE *m = fopen("/proc/self/maps", "r");
    while (m && fgets(line, sizeof line, m)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, "libperfscope.so")) {
            fputs(p, stdout);
            break;
        }
    }
    return 0;
}
EOF
cp prog.c prog.cc
# shellcheck disable=SC2086  # pkg-config's words
gcc -O1 -Wall -Werror -o prog_c prog.c $pc || fail "gcc prog.c $pc failed"
# shellcheck disable=SC2086
g++ -O1 -Wall -Werror -o prog_cc prog.cc $pc || fail "g++ prog.cc $pc failed"
for p in prog_c prog_cc; do
  (cd / && "$pre/bin/perfscope" record -o "$tmp/out_$p" -- "$tmp/$p") >"$p.out" 2>"$p.err"
  rc=$?
  check "installed perfscope record -- $p: exit $rc (stderr: $(tail -c 600 "$p.err"))" [ "$rc" -eq 0 ]
  check "$p mapped $(cat "$p.out"), expected the installed $pre/lib/perfscope/libperfscope.so" \
    [ "$(cat "$p.out")" = "$(realpath "$pre/lib/perfscope/libperfscope.so")" ]
  check "$p: the summary line names 2 phases: $(grep '^perfscope record:' "$p.err")" \
    grep -q '^perfscope record: .* 2 phases ->' "$p.err"
  py_check "$p run.json" - "out_$p" <<'EOF'
import json, sys
from checks import check, finish
rj = json.load(open(sys.argv[1] + "/run.json"))
g = rj.get("groups", {})
check(set(g) == {"load", "decode"}, "groups %s, expected load and decode" % sorted(g))
check(g.get("decode", {}).get("tokens") == 64, "decode: %r" % g.get("decode"))
check(rj.get("status") == "ok", "status %r" % rj.get("status"))
finish()
EOF
done

# The installed Python module, from its documented folder.
PYTHONPATH=$pre/share/perfscope/python "$pre/bin/perfscope" record -o out_py -- python3 -c '
import perfscope_markers as pm
with pm.phase("prefill", tokens=32):
    sum(i * i for i in range(300000))
' >py.out 2>py.err
rc=$?
check "perfscope record -- python3 (installed module): exit $rc: $(tail -c 600 py.err)" [ "$rc" -eq 0 ]
py_check "python run.json" - <<'EOF'
import json
from checks import check, finish
g = json.load(open("out_py/run.json")).get("groups", {})
check(g.get("prefill", {}).get("tokens") == 32 and g["prefill"].get("occurrences") == 1,
      "prefill from the installed perfscope_markers: %r" % g.get("prefill"))
finish()
EOF

mk uninstall PREFIX="$pre" || bad "make uninstall PREFIX=$pre failed"
after=$(cd "$pre" && find . | sort)
check "after uninstall $pre holds:
$after
expected what was there before:
$before" [ "$after" = "$before" ]
checks_done
