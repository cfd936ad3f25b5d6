#!/bin/sh
# record_phases.sh: the README's example of a shell script that marks phases, run under
#   perfscope record -o OUT -- examples/record_phases.sh
# (t_tools_record_e2e runs it). `perfscope mark` writes each marker with t= the script's own
# CLOCK_MONOTONIC into $LLMPERFSCOPE_MARKERS, which perfscope record set to OUT/markers. It must
# never write anything but the engine's output on stdout.
set -e
PERFSCOPE=${PERFSCOPE:-perfscope}   # build/perfscope in a build tree
ENGINE=${ENGINE:-build/toy-engine}

"$PERFSCOPE" mark warmup begin
"$ENGINE" --no-api --scale 0.25 --prompt 16 --gen 4
"$PERFSCOPE" mark warmup end tokens=20
"$PERFSCOPE" mark generate begin
"$ENGINE" --no-api --scale 0.25 --prompt 64 --gen 16
"$PERFSCOPE" mark generate end tokens=80
