#!/usr/bin/env bash
# t_tools_samples_cut: the sample file reader (format/samples.c) on a file big enough to be
# mapped (format/filemap.c), cut short by truncate while it is being read
# (tests/samples_cut_unit.c): no crash, the reading ends cleanly, every record handed out is
# the one written, none is read from past the cut after it is made (neither the zeros left in
# the cut's own page nor those mapped past it), and the note says the file was cut short while
# being read and how many records lay past the cut; an uncut file reads whole with no note; a
# SIGBUS sent to the process (not a fault in a mapping) still ends it with SIGBUS. Built as the
# tools are, with AddressSanitizer and UBSan under `make test-asan` (ASan's own SIGBUS handler
# off there: it would report the sent one itself, where the check wants the default action).
set -u
. "$ROOT/tests/lib.sh"
W=$PWD
[ -z "$SAN" ] || export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_sigbus=0
gcc -std=gnu11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE $SAN -I"$ROOT/format" "$ROOT/tests/samples_cut_unit.c" \
  "$ROOT/format/samples.c" "$ROOT/format/filemap.c" "$ROOT/format/textfile.c" "$ROOT/format/runfolder.c" \
  -o "$W/samples_cut_unit" -pthread || fail "cannot build tests/samples_cut_unit.c"
"$W/samples_cut_unit" "$W" || fail "format/samples.c on a file cut while mapped (above)"
"$W/samples_cut_unit" "$W" kill >kill.out 2>&1
rc=$?
grep -v '^ok\|^  ' kill.out
[ "$rc" -eq $((128 + 7)) ] || fail "a SIGBUS sent by kill did not end the process with SIGBUS (exit $rc)"
echo "a SIGBUS sent by kill ends the process with SIGBUS (exit $rc)"
