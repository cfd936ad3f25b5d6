#!/usr/bin/env bash
# t_tools_filemap_release: a big file read through format/filemap.c never stays resident whole:
# the pages the reader has gone past are given back, by the populating thread while it runs and
# by the reader once it has ended, whether it ended at the file's end or at once because the
# kernel refused MADV_POPULATE_READ (before Linux 5.14; here madvise is wrapped to refuse it).
# tests/filemap_release_unit.c reads a 96 MiB file and holds RssFile within 32 MiB of its start.
# Under AddressSanitizer and UBSan with `make test-asan`.
set -u
. "$ROOT/tests/lib.sh"
W=$PWD
build() { # out extra-args...
  local out=$1; shift
  gcc -std=gnu11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE $SAN -I"$ROOT/format" "$@" \
    "$ROOT/tests/filemap_release_unit.c" "$ROOT/format/filemap.c" -o "$W/$out" -pthread \
    || fail "cannot build tests/filemap_release_unit.c"
}
build plain
build refused -DREFUSE_POPULATE -Wl,--wrap=madvise
check "pages given back with the populating thread" "$W/plain" "$W"
check "pages given back with populating refused (the reader's own)" "$W/refused" "$W"
checks_done
