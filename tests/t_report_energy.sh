#!/usr/bin/env bash
# t_report_energy: perfscope-report OUT on runs with known energy, memory and throughput
# (tests/report_energy.py): a fake RAPL driver with wraparound, dead and unreadable zones, the
# fake NVML (tests/fixtures/fake_nvml.c) with two GPUs and moving per-process memory, an idle
# bracket for the marginal energy, a SIGKILLed run, a run without counters.
# Run from an empty folder with ROOT (and BUILD) set, as tests/run.sh does.
set -u
. "$ROOT/tests/lib.sh"
need_shim
tool=$BUILD/perfscope-report
[ -x "$tool" ] || fail "$tool is not built (make)"
command -v python3 >/dev/null || skip "python3 missing"
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC -shared -o "$PWD/fake_nvml.so" \
  "$ROOT/tests/fixtures/fake_nvml.c" || fail "cannot build the fake NVML"
exec python3 "$ROOT/tests/report_energy.py" "$tool" "$PWD/fake_nvml.so"
