# tests/lib.sh: shared helpers for the shell tests (sourced, not run).
#
# The runner (tests/run.sh) gives every test ROOT, BUILD and SHIM and a fresh temporary folder as
# the current directory. Exit status: 0 pass, 77 skip (reason on the last line), other fail.

: "${ROOT:?run through tests/run.sh (ROOT unset)}"
: "${BUILD:=$ROOT/build}"
: "${SHIM:=$BUILD/libperfscope.so}"
export ROOT BUILD SHIM
export PYTHONPATH="$ROOT/tests${PYTHONPATH:+:$PYTHONPATH}"
TBUILD=$BUILD/tests
# Targets are built as the shim's users build: optimised, with debug info and frame pointers.
TCFLAGS=(-O1 -g -fno-omit-frame-pointer -pthread -Wall -I"$ROOT/include" -I"$ROOT/tests/targets")

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
note() { echo "# $*"; }

need_shim() {
    [ -f "$SHIM" ] || fail "the shim is not built: $SHIM (make build/libperfscope.so)"
}

# _build OUT SOURCE COMPILER ARGS...: compile once into $BUILD/tests; rebuild when the source,
# burn.h or this file is newer. Writes to a temporary name, then renames (tests never see a
# half-written target).
_build() {
    local out=$1 src=$2 cc=$3; shift 3
    mkdir -p "$TBUILD"
    if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$ROOT/tests/targets/burn.h" ] \
       && [ "$out" -nt "$ROOT/tests/lib.sh" ]; then
        return 0
    fi
    local tmp
    tmp=$(mktemp "$out.XXXXXX")
    if ! "$cc" "${TCFLAGS[@]}" "$@" -o "$tmp" "$src" 2>"$tmp.err"; then
        cat "$tmp.err" >&2
        rm -f "$tmp" "$tmp.err"
        fail "cannot build $src"
    fi
    rm -f "$tmp.err"
    chmod 755 "$tmp"
    mv -f "$tmp" "$out"
}

# build_target NAME [extra compiler/linker args...]: tests/targets/NAME.c (or .cc, with g++)
# into $BUILD/tests/NAME. Prints nothing; the path is $TBUILD/NAME.
build_target() {
    local name=$1; shift
    local src=$ROOT/tests/targets/$name.c cc=${CC:-gcc}
    if [ ! -f "$src" ]; then src=$ROOT/tests/targets/$name.cc; cc=${CXX:-g++}; fi
    [ -f "$src" ] || fail "no source for target $name"
    _build "$TBUILD/$name" "$src" "$cc" "$@" -ldl
}

# build_lib NAME: tests/targets/NAME.c into $BUILD/tests/NAME.so (a shared library).
build_lib() {
    local name=$1; shift
    _build "$TBUILD/$name.so" "$ROOT/tests/targets/$name.c" "${CC:-gcc}" -shared -fPIC "$@"
}

# perf_events_allowed: whether this process may open a per-thread task-clock perf event
# (perf_event_paranoid, seccomp). The 997 Hz checks need it: the tick timer cannot deliver 997 Hz.
perf_events_allowed() {
    build_target perf_probe
    "$TBUILD/perf_probe" >/dev/null 2>&1
}

# py: run python3 with tests/ on the path (samples.py).
py() { python3 "$@"; }
