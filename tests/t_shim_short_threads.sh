#!/usr/bin/env bash
# t_shim_short_threads: threads shorter than a sampling period are sampled in proportion to their
# CPU time. r_shortthreads runs 300 threads, two at a time, each spinning until it has used 4 ms
# of its own CPU time, under the shim at 199 Hz (a period of 5.03 ms). A thread's clock used to
# fire first after a whole period of its CPU time: none of these threads was ever sampled (0
# samples of 241 expected, either clock). Its first expiry is now uniform over the period
# (preload/clock.c), so each thread's expected samples are its CPU time over the period:
# - the perf clock (precise, on the thread's own CPU time): 60% to 140% of the threads' CPU s x
#   199 (measured 101%);
# - the tick timer (the default at 199 Hz: a signal waits for the next scheduler tick while the
#   thread runs, so a thread shorter than a tick is caught only if a tick falls in it after the
#   expiry): at least 15% (measured 45% with 4 ms ticks), where it was 0.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_shortthreads

# run CLOCK: the short threads' samples over the expected, in percent, from one run.
run() {
    rm -rf "out-$1"
    local cpu
    cpu=$(PERFSCOPE_CLOCK=$1 PERFSCOPE_HZ=199 PERFSCOPE_OUT="$PWD/out-$1" LD_PRELOAD="$SHIM" \
        "$TBUILD/r_shortthreads" 300 4000) || fail "r_shortthreads under the shim ($1 clock) failed"
    py - "$PWD/out-$1" "$cpu" <<'PY'
import glob, os, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests"))
import samples
out, cpu_s = sys.argv[1], int(sys.argv[2]) / 1e9
n = sum(1 for f in glob.glob(out + "/cpuprof.*.bin") for s in samples.read_samples(f).samples if s.comm == "short")
print("%d %.0f" % (n, 100.0 * n / (cpu_s * 199)))
PY
}

read -r n pct <<<"$(run timer)"
note "tick timer: $n samples of the short threads, $pct% of their CPU s x 199"
check "tick timer: the short threads sampled at $pct% of the rate (at least 15%; 0 before)" [ "$pct" -ge 15 ]
if perf_events_allowed; then
    read -r n pct <<<"$(run perf)"
    note "perf clock: $n samples of the short threads, $pct% of their CPU s x 199"
    check "perf clock: the short threads sampled at $pct% of the rate (60% to 140%; 0 before)" \
        [ "$pct" -ge 60 ] && [ "$pct" -le 140 ]
else
    note "perf events refused here (perf_event_paranoid or seccomp): the perf clock's case is not run"
fi
checks_done
