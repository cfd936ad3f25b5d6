#!/usr/bin/env bash
# t_shim_thread_churn: a program that starts thousands of threads a second, four alive at a time
# (r_threadchurn: 64,000 threads of some microseconds each), is sampled on every thread. The
# shim's registry (4,096 slots) gets a thread's slot back only at the writer's next pass, after
# the thread's samples are drained; with the perf clock a pass came too late, the registry
# filled with threads that had ended, and later threads went unsampled ("more than 4096
# threads" in perfscope.log, 3 runs of 3). The thread start now asks for a pass at once when
# the registry is three quarters full (preload/threads.c). Needs perf events: with the tick
# timer the registry did not fill here.
set -u
. "$ROOT/tests/lib.sh"
need_shim
perf_events_allowed || skip "perf events refused here (perf_event_paranoid or seccomp): the case needs the perf clock"
build_target r_threadchurn

mkdir -p out
n=$(PERFSCOPE_CLOCK=perf PERFSCOPE_OUT="$PWD/out" LD_PRELOAD="$SHIM" "$TBUILD/r_threadchurn" 16000) ||
    fail "r_threadchurn under the shim failed"
check "r_threadchurn started $n threads (64000)" [ "$n" = 64000 ]
full=$(grep -c "more than .* threads" out/perfscope.log)
check "the registry never filled ($full 'more than 4096 threads' lines in perfscope.log)" [ "$full" -eq 0 ]
py_check "meta.json" - <<'PY'
import json
from checks import check, finish
s = json.load(open("out/meta.json"))["sampling"]
print("samples %s" % s.get("samples"))
check(json.load(open("out/meta.json")).get("status") == "ok", "the run's status is not ok")
finish()
PY
checks_done
