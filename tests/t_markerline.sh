#!/usr/bin/env bash
# t_markerline: the marker line parser (preload/markerline.c, a pure function: the shim's leader
# and `make fuzz` call the same code) against its accept/refuse table and the run-clock rule
# for t= (tests/markerline_unit.c). The parser is compiled as the shim compiles it, warnings
# included, and linked alone: it must need nothing else of the shim.
set -u
. "$ROOT/tests/lib.sh"
CF="-std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE"
gcc $CF -fno-omit-frame-pointer -fPIC -ftls-model=initial-exec -fvisibility=hidden -I"$ROOT/preload" \
    -c "$ROOT/preload/markerline.c" -o markerline.o || fail "preload/markerline.c does not build as the shim builds it"
gcc $CF -I"$ROOT/preload" -o markerline_unit "$ROOT/tests/markerline_unit.c" markerline.o \
    || fail "cannot build tests/markerline_unit.c against preload/markerline.c alone"
./markerline_unit
