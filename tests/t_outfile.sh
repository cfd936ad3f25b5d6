#!/usr/bin/env bash
# t_outfile: how every tool puts a finished output in place (format/outfile.c), built as the
# tools build it, in a scratch folder (tests/outfile_unit.c), both ways: renamed over the old
# file (a file opened by path) and exchanged with it, then the old one removed (a derived output,
# outfile_open). Each way: a new name; over a regular file (another hard link and an open
# descriptor keep the old content); over a symbolic link; over a folder (refused); a reader
# opening the name again and again while 2,000 commits replace it never finds it missing or
# short; no temporary file left.
set -u
. "$ROOT/tests/lib.sh"
pkg-config --exists libcjson || skip "libcjson (pkg-config) missing"
W=$PWD
gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$ROOT/format" "$ROOT/tests/outfile_unit.c" \
  "$ROOT/format/outfile.c" "$ROOT/format/runfolder.c" "$ROOT/format/samples.c" "$ROOT/format/filemap.c" "$ROOT/format/textfile.c" "$ROOT/format/utf8.c" -o "$W/outfile_unit" -pthread $(pkg-config --cflags --libs libcjson) \
  || fail "cannot build tests/outfile_unit.c"
mkdir -p "$W/scratch"
"$W/outfile_unit" "$W/scratch" || fail "format/outfile.c's commit (above)"
