#!/usr/bin/env bash
# t_tools_symsort: the symbolizer's symbol sort (symbolize/symsort.c, a radix sort on the start
# address) gives exactly the order of qsort with sym_order, its one comparator, on random tables
# (tests/symsort_unit.c): 0 to 50,000 symbols, starts above a bias, over 64 bits and all alike,
# up to every symbol an alias of another. Under AddressSanitizer and UBSan with `make test-asan`.
set -u
. "$ROOT/tests/lib.sh"
W=$PWD
gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE $SAN -I"$ROOT/symbolize" "$ROOT/tests/symsort_unit.c" \
  "$ROOT/symbolize/symsort.c" -o "$W/symsort_unit" || fail "cannot build tests/symsort_unit.c"
"$W/symsort_unit" || fail "symbolize/symsort.c's order (above)"
