#!/usr/bin/env bash
# t_tools_phases_hint: the innermost phase at a time, as collecting and replaying look it up
# sample after sample (format/phases.c phases_at_hint: from the span the last sample was in),
# against a plain scan of the spans (tests/phases_hint_unit.c): times in order, repeated, jumping
# back, outside every phase. Under AddressSanitizer and UBSan with `make test-asan`.
set -u
. "$ROOT/tests/lib.sh"
pkg-config --exists libcjson || skip "libcjson (pkg-config) missing"
W=$PWD
gcc -std=gnu11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE $SAN -I"$ROOT/format" "$ROOT/tests/phases_hint_unit.c" \
  "$ROOT/format/phases.c" "$ROOT/format/jsonl.c" "$ROOT/format/textfile.c" -o "$W/phases_hint_unit" \
  $(pkg-config --cflags --libs libcjson) || fail "cannot build tests/phases_hint_unit.c"
"$W/phases_hint_unit" "$W" || fail "format/phases.c phases_at_hint (above)"
