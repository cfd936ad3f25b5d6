# tests/lib.sh: shared helpers for the shell tests (sourced, not run); every tests/t_*.sh sources it.
#
# The runner (tests/run.sh) gives every test ROOT, BUILD, SHIM and TOOLS and a fresh temporary
# folder as the current directory. Exit status: 0 pass, 77 skip (reason on the last line), other
# fail. The shim is always $SHIM (the normal build); the tools (perfscope-report,
# perfscope-symbolize) are taken from $TOOLS: $BUILD, or the sanitizer build under make test-asan.
#
# SAN: the sanitizer flags for a test's own build under make test-asan (below).
# Checks, the shell side of tests/checks.py (the Python checkers' convention, same lines):
#   fail MSG         a failed check that ends the test: "FAIL: MSG", exit 1
#   check MSG CMD..  a check that goes on: runs CMD; when it fails, "FAIL: MSG", counted
#   bad MSG          a failed check that goes on: check MSG false
#   py_check L ARG.. runs python3 ARG.. (a checker using tests/checks.py), adds its count
#   checks_done      the count, "all N checks passed" / "K of N checks failed"; exit 0 or 1
#   skip MSG         exit 77 with the reason;  note MSG  a "# MSG" line

: "${ROOT:?run through tests/run.sh (ROOT unset)}"
: "${BUILD:=$ROOT/build}"
: "${SHIM:=$BUILD/libperfscope.so}"
: "${TOOLS:=$BUILD}"
export ROOT BUILD SHIM TOOLS
export PYTHONPATH="$ROOT/tests${PYTHONPATH:+:$PYTHONPATH}"
TBUILD=$BUILD/tests
# Targets are built as the shim's users build: optimised, with debug info and frame pointers.
TCFLAGS=(-O1 -g -fno-omit-frame-pointer -pthread -Wall -I"$ROOT/include" -I"$ROOT/tests/targets")

# SAN: the compiler flags a test's own build of the tools' sources takes so that `make test-asan`
# (TOOLS is the sanitizer build there) runs it under AddressSanitizer and UBSan; empty otherwise.
SAN=
case "$TOOLS" in
  *build-asan*) SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" ;;
esac

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
note() { echo "# $*"; }

CHECKS_RUN=0 CHECKS_FAILED=0
check() {
    local msg=$1; shift
    CHECKS_RUN=$((CHECKS_RUN+1))
    "$@" && return 0
    echo "FAIL: $msg" >&2
    CHECKS_FAILED=$((CHECKS_FAILED+1))
    return 1
}
bad() { check "$*" false; }

# py_check LABEL ARGS...: python3 ARGS (stdin passed on), a checker using tests/checks.py: its
# lines shown, its count line as a note, its counts added to this test's. One that ends without
# its count line (it could not start) or with an exit status its count does not explain is one
# failed check more.
py_check() {
    local label=$1 out rc last n m; shift
    out=$(python3 "$@" 2>&1)
    rc=$?
    last=${out##*$'\n'}
    if [[ "$last" =~ ^(.*[^0-9])?([0-9]+)\ of\ ([0-9]+)\ checks\ failed$ ]]; then
        n=${BASH_REMATCH[2]} m=${BASH_REMATCH[3]}
    elif [[ "$last" =~ ^(.*[^0-9])?all\ ([0-9]+)\ checks\ passed$ ]]; then
        n=0 m=${BASH_REMATCH[2]}
    else
        [ -z "$out" ] || printf '%s\n' "$out"
        check "$label: exit $rc without a count line" [ "$rc" -eq 0 ]
        return
    fi
    printf '%s# %s\n' "${out%"$last"}" "$last"
    CHECKS_RUN=$((CHECKS_RUN+m)) CHECKS_FAILED=$((CHECKS_FAILED+n))
    [ "$rc" -ne 0 ] || [ "$n" -eq 0 ] || bad "$label: exit 0 although $n checks failed"
    [ "$rc" -eq 0 ] || [ "$n" -gt 0 ] || bad "$label: exit $rc although all its checks passed"
}

checks_done() {
    if [ "$CHECKS_FAILED" -gt 0 ]; then
        echo "$CHECKS_FAILED of $CHECKS_RUN checks failed"
        exit 1
    fi
    echo "all $CHECKS_RUN checks passed"
    exit 0
}

need_shim() {
    [ -f "$SHIM" ] || fail "the shim is not built: $SHIM (make build/libperfscope.so)"
}

# need_tool NAME: TOOL=$TOOLS/NAME (perfscope-report, perfscope-symbolize), or fail when it is not
# built.
need_tool() {
    TOOL=$TOOLS/$1
    [ -x "$TOOL" ] || fail "$TOOL is not built (make; make test-asan for the sanitizer build)"
}

# _build OUT SOURCE COMPILER ARGS...: compile once into $BUILD/tests; rebuild when the source,
# a header in tests/targets or this file is newer. Writes to a temporary name, then renames (tests never see a
# half-written target).
_build() {
    local out=$1 src=$2 cc=$3; shift 3
    mkdir -p "$TBUILD"
    # Up to date: newer than its source, every header the targets share, and this file.
    local dep fresh=0
    if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$ROOT/tests/lib.sh" ]; then
        fresh=1
        for dep in "$ROOT"/tests/targets/*.h; do
            [ "$out" -nt "$dep" ] || { fresh=0; break; }
        done
    fi
    [ "$fresh" -eq 1 ] && return 0
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

# build_lib NAME: tests/targets/NAME.c (or .cc, with g++) into $BUILD/tests/NAME.so (a shared
# library).
build_lib() {
    local name=$1; shift
    local src=$ROOT/tests/targets/$name.c cc=${CC:-gcc}
    if [ ! -f "$src" ]; then src=$ROOT/tests/targets/$name.cc; cc=${CXX:-g++}; fi
    [ -f "$src" ] || fail "no source for library $name"
    _build "$TBUILD/$name.so" "$src" "$cc" -shared -fPIC "$@"
}

# perf_events_allowed: whether this process may open a per-thread task-clock perf event
# (perf_event_paranoid, seccomp). The 997 Hz checks need it: the tick timer cannot deliver 997 Hz.
perf_events_allowed() {
    build_target perf_probe
    "$TBUILD/perf_probe" >/dev/null 2>&1
}

# py: run python3 with tests/ on the path (samples.py).
py() { python3 "$@"; }
