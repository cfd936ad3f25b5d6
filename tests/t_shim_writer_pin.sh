#!/usr/bin/env bash
# t_shim_writer_pin: the writer thread starts on its creator's CPU and keeps to it until it first
# wakes (preload/interpose.c ps_start_shim_thread_near; docs/shim.md "What a process pays": a
# short process whose shim thread never ran on another CPU pays less). tests/targets/r_writerpin
# runs as an exec'd child of a shell under the shim (not the leader: its one shim thread is the
# writer) and reads its shim threads' CPU masks:
# - at its main(): one CPU, one of the process's (a run where the writer already woke, on a
#   machine that held the target back 10 ms, shows nothing and is run again, 5 runs at most; a
#   writer never pinned fails all five);
# - after a second of CPU (samples, passes): the process's CPUs again;
# - a mask the target sets on the still pinned writer (one other CPU, as taskset -a would) is
#   kept after the writer wakes;
# - with the process on one CPU (taskset -c), nothing is pinned and the target runs as ever.
# Masks and switch counts from /proc and sched_getaffinity, never timed.
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
# run_pinned out mode seconds: runs until "start" shows the one shim thread on one CPU, 5 runs
# at most. main() comes well before the writer's first wake (10 ms after its start at the
# earliest) unless the machine holds the target back that long: a run where the writer already
# woke shows nothing and is run again; a writer never pinned fails all five.
run_pinned() {
  local i out
  for i in 1 2 3 4 5; do
    out=$(run "$@") || fail "r_writerpin $2 failed: $out"
    if echo "$out" | awk '/^start/ {split($2, f, ":"); exit !(NF == 3 && f[2] ~ /^[0-9]+$/)}'; then
      echo "$out"; return 0
    fi
    note "run $i: not one shim thread on one CPU at main(): $(echo "$out" | head -1)"
  done
  echo "$out"; return 1
}
out=$(run_pinned o1 run 1.0)
check "the writer seen on one CPU at main() in one of 5 runs" [ $? -eq 0 ]
echo "$out"
start=$(echo "$out" | awk '/^start/'); end=$(echo "$out" | awk '/^end/')
proc=$(echo "$start" | sed 's/.* proc://')
first=$(echo "$start" | awk '{print $2}')
tid=${first%%:*}; rest=${first#*:}; cpu=${rest%%:*}
check "one shim thread (the writer) at start: $start" [ "$(echo "$start" | wc -w)" -eq 3 ]
check "the writer starts on one CPU ($cpu)" bash -c "[[ '$cpu' =~ ^[0-9]+$ ]]"
check "that CPU is one of the process's ($proc)" bash -c "echo ',$proc,' | grep -q ',$cpu,'"
check "after it woke the writer has the process's CPUs: $end" bash -c "echo '$end' | grep -q ' $tid:$proc:'"

out=$(run_pinned o2 move 1.0)
check "the writer seen on one CPU before the move in one of 5 runs" [ $? -eq 0 ]
echo "$out"
moved=$(echo "$out" | awk '/^moved/ {print $2}')
end=$(echo "$out" | awk '/^end/')
check "the target moved the pinned writer to another CPU" [ -n "$moved" ]
check "a mask set by the target stays after the writer wakes: $end" bash -c "echo '$end' | grep -qE ' [0-9]+:$moved:'"

one=$(echo "$proc" | cut -d, -f1)
out=$(run o3 run 0.3 "$one") || fail "r_writerpin under taskset failed: $out"
echo "$out"
check "on one CPU: the writer has that CPU, start and end" bash -c "echo '$out' | grep -cE ' [0-9]+:$one:.* proc:$one\$' | grep -qx 2"
check "no problem logged" bash -c "! grep -qi 'cannot start the writer' o1/perfscope.log o2/perfscope.log o3/perfscope.log"
checks_done
