#!/usr/bin/env bash
# t_tools_report_energy: $TOOLS/perfscope-report OUT on runs with known energy, memory and
# throughput (tests/report_energy.py): the energy per domain and per token, the periodic counter
# readings (a fake RAPL driver with wraparound, dead and unreadable zones; the fake NVML,
# tests/fixtures/fake_nvml.c, with two GPUs), GPU and host memory peaks (per-process memory the
# target moves), an idle bracket for the marginal energy, a SIGKILLed run, a run without counters.
# The runs are made under the shim ($SHIM, the normal build); the report is $TOOLS's, so
# `make test-asan` runs it under ASan/UBSan ("tools" in the name).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
command -v python3 >/dev/null || skip "python3 missing"
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC -shared -o "$PWD/fake_nvml.so" \
  "$ROOT/tests/fixtures/fake_nvml.c" || fail "cannot build the fake NVML"
exec python3 "$ROOT/tests/report_energy.py" "$TOOL" "$PWD/fake_nvml.so"
