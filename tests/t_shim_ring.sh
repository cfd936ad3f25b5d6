#!/usr/bin/env bash
# t_shim_ring: the rings between each thread's SIGPROF handler and the writer, and the registry's
# per-thread sample counters (preload/ring.c, built from the shim's source as the shim builds it),
# driven by tests/ring_unit.c: a full ring refuses and frees a slot as soon as one is released
# (the producer reads the consumer's tail again only when its older reading says full), order and
# contents across wraps and under a racing consumer, and counters summed over the registry with an
# exited thread's slot reused; and the kernel's call-chain records into the rings
# (preload/kchain.c, tests/kchain_unit.c: markers, cuts, wraps, lost and torn records, stops).
# Run from an empty folder with ROOT set, as tests/run.sh does.
set -u
. "$ROOT/tests/lib.sh"
CF="-std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fno-omit-frame-pointer -pthread"
gcc $CF -fPIC -ftls-model=initial-exec -fvisibility=hidden -I"$ROOT/include" -I"$ROOT/format" \
  -c "$ROOT/preload/ring.c" -o ring.o || fail "preload/ring.c does not build as the shim builds it"
gcc $CF -I"$ROOT/preload" "$ROOT/tests/ring_unit.c" ring.o -o ring_unit || fail "cannot build tests/ring_unit.c"
out=$(./ring_unit 2>&1)
rc=$?
echo "$out"
check "ring_unit passes (exit $rc)" [ "$rc" -eq 0 ]
check "ring_unit ran its checks" grep -q '^ok [0-9]' <<<"$out"
# The kernel's call-chain records into the rings (preload/kchain.c), on buffers written here.
gcc $CF -fPIC -ftls-model=initial-exec -fvisibility=hidden -I"$ROOT/include" -I"$ROOT/format" \
  -c "$ROOT/preload/kchain.c" -o kchain.o || fail "preload/kchain.c does not build as the shim builds it"
gcc $CF -I"$ROOT/preload" "$ROOT/tests/kchain_unit.c" kchain.o ring.o -o kchain_unit || fail "cannot build tests/kchain_unit.c"
out=$(./kchain_unit 2>&1)
rc=$?
echo "$out"
check "kchain_unit passes (exit $rc)" [ "$rc" -eq 0 ]
check "kchain_unit ran its checks" grep -q '^ok [0-9]' <<<"$out"
checks_done
