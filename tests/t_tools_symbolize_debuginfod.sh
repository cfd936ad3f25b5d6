#!/usr/bin/env bash
# t_tools_symbolize_debuginfod: the symbolizer loads libdebuginfod only when DEBUGINFOD_URLS
# names a server (symbolize/debuginfod_gate.c). On a synthetic run folder over libc, libm and
# libstdc++ (bench/symbolize_gen.py; libstdc++ has no debug file here, so libdwfl's search for it
# ends at debuginfod), with the debug info cache off: unset and empty, the loader's log
# (LD_DEBUG=files) shows no libdebuginfod; with a server named (a closed local port), libdw loads
# it, and every output is the same as without it. perfscope (the front door) carries the same
# gate. (An elfutils that left libdebuginfod unloaded by itself with no server named would pass
# the first two checks without the gate; Debian 12's 0.188 loads it whatever the environment.) $TOOLS/perfscope-symbolize, so `make test-asan` runs it under ASan/UBSan.
set -u
. "$ROOT/tests/lib.sh"
need_tool perfscope-symbolize
command -v nm >/dev/null || skip "nm missing (binutils)"
lib=$(ldconfig -p | awk '$1 == "libdebuginfod.so.1" {print $NF; exit}')
[ -n "$lib" ] || skip "libdebuginfod1 is not installed: libdwfl has nothing to load, the gate nothing to refuse"
python3 "$ROOT/bench/symbolize_gen.py" run 3000 20 5 >/dev/null || fail "bench/symbolize_gen.py failed"
export PERFSCOPE_DEBUG_CACHE=0 DEBUGINFOD_CACHE_PATH=$PWD/dcache DEBUGINFOD_TIMEOUT=5
# symbolize NAME [VAR=VALUE]: the tool on a copy of run, the loader's log in NAME.ld.*
symbolize() {
  local name=$1; shift
  rm -rf "$name"; cp -r run "$name"
  env -u DEBUGINFOD_URLS "$@" LD_DEBUG=files LD_DEBUG_OUTPUT="$PWD/$name.ld" "$TOOL" "$name" >"$name.out" 2>&1 ||
    fail "$name: perfscope-symbolize failed: $(tail -n 3 "$name.out")"
}
loaded() { cat "$1".ld.* 2>/dev/null | grep -c 'file=libdebuginfod.so.1 .*dynamically loaded'; }
symbolize unset
symbolize empty DEBUGINFOD_URLS=
# a server on a local port nothing listens on (bound, then closed): refused at once
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
symbolize server DEBUGINFOD_URLS=http://127.0.0.1:$port
check "DEBUGINFOD_URLS unset: libdebuginfod not loaded" [ "$(loaded unset)" = 0 ]
check "DEBUGINFOD_URLS empty: libdebuginfod not loaded" [ "$(loaded empty)" = 0 ]
check "DEBUGINFOD_URLS names a server: libdw loads libdebuginfod" [ "$(loaded server)" -ge 1 ]
for f in stacks.folded profile.json flame.json trace.json; do
  check "$f the same with and without libdebuginfod" cmp -s unset/$f server/$f
done
check "libstdc++'s frames named (from its symbol table)" grep -q 'std::' unset/stacks.folded
if [ -x "$TOOLS/perfscope" ]; then
  check "perfscope carries the gate (defines dlopen)" sh -c "nm -D --defined-only '$TOOLS/perfscope' | grep -qw dlopen"
fi
checks_done
