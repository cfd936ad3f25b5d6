#!/usr/bin/env bash
# t_shim_writer_pin: the writer thread starts on its creator's CPU and keeps to it until its first
# pass (preload/interpose.c ps_start_shim_thread_near; docs/shim.md "What a process pays": a
# short process whose shim thread never ran on another CPU pays less). tests/targets/r_writerpin
# runs as an exec'd child of a shell under the shim (not the leader: its one shim thread is the
# writer) and reads its shim threads' CPU masks:
# - at its main(), well before the writer's first pass (10 ms after its start at the earliest):
#   one CPU, one of the process's;
# - after a second of CPU (samples, passes): the process's CPUs again;
# - a mask the target sets on the writer meanwhile (one other CPU, as taskset -a would) is kept;
# - with the process on one CPU (taskset -c), nothing is pinned and the target runs as ever.
# Masks read from /proc and sched_getaffinity, never timed.
set -u
. "$ROOT/tests/lib.sh"
need_shim
[ "$(nproc)" -ge 2 ] || skip "one CPU: there is no other CPU for a thread to start on"
build_target r_writerpin
T=$TBUILD/r_writerpin
run() { # out-folder mode seconds [taskset cpu]
  local pre=()
  [ -n "${4:-}" ] && pre=(taskset -c "$4")
  rm -rf "$1"
  PERFSCOPE_OUT=$PWD/$1 LD_PRELOAD=$SHIM "${pre[@]}" bash -c "'$T' $2 $3; true"
}
out=$(run o1 run 1.0) || fail "r_writerpin failed: $out"
echo "$out"
start=$(echo "$out" | awk '/^start/'); end=$(echo "$out" | awk '/^end/')
proc=$(echo "$start" | sed 's/.* proc://')
first=$(echo "$start" | awk '{print $2}')
check "one shim thread (the writer) at start: $start" [ "$(echo "$start" | wc -w)" -eq 3 ]
cpu=${first#*:}
check "the writer starts on one CPU ($cpu)" bash -c "[[ '$cpu' =~ ^[0-9]+$ ]]"
check "that CPU is one of the process's ($proc)" bash -c "echo ',$proc,' | grep -q ',$cpu,'"
check "after its passes the writer has the process's CPUs: $end" bash -c "echo '$end' | grep -q ' ${first%%:*}:$proc proc:$proc\$'"

out=$(run o2 move 1.0) || fail "r_writerpin move failed: $out"
echo "$out"
moved=$(echo "$out" | awk '/^moved/ {print $2}')
end=$(echo "$out" | awk '/^end/')
check "the target moved the writer to another CPU" [ -n "$moved" ]
check "a mask set by the target stays after the passes: $end" bash -c "echo '$end' | grep -qE ' [0-9]+:$moved proc:'"

one=$(echo "$proc" | cut -d, -f1)
out=$(run o3 run 0.3 "$one") || fail "r_writerpin under taskset failed: $out"
echo "$out"
check "on one CPU: the writer has that CPU, start and end" bash -c "echo '$out' | grep -c ':$one proc:$one\$' | grep -qx 2"
check "no problem logged" bash -c "! grep -qi 'cannot start the writer' o1/perfscope.log o2/perfscope.log o3/perfscope.log"
checks_done
