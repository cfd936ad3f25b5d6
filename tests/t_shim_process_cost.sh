#!/usr/bin/env bash
# t_shim_process_cost: what a short process pays in system calls (docs/shim.md, "What a process
# pays"), counted by strace -f -c, never timed. A bash loop of 20 /bin/true, with and without the
# shim; per iteration (the shell's fork child, its exec, /bin/true) the shim adds at most 320
# calls (335 before the cut, 280 after), at most 2 readlink (6.3 before, 1.1 after: the fork
# child read /proc/self/exe again and every image resolved its own path, one readlink a path
# component, for a LD_PRELOAD that is absolute) and at most 30 getpid (41 before, 20.2 after:
# sigaction of signals the shim does not stand in for and mask calls that do not touch SIGPROF
# asked for the pid). Bounds with room for other work, not the exact counts: these costs must
# not come back unnoticed. The readlink bound is a process's own (its executable, its path): the
# machine check's readlink of other processes' exe links ("/proc/<pid>/exe", once a run, in the
# leader's watcher: a kernel thread has none) is counted apart, from a second traced run.
set -u
. "$ROOT/tests/lib.sh"
need_shim
command -v strace >/dev/null 2>&1 || skip "strace is not installed: the system calls cannot be counted"

N=20
loop="for ((i = 0; i < $N; i++)); do /bin/true; done"
strace -f -c -o without.txt bash -c "$loop" || fail "strace cannot trace here"
mkdir -p out
strace -f -c -o with.txt -E LD_PRELOAD="$SHIM" -E PERFSCOPE_OUT="$PWD/out" bash -c "$loop" ||
    fail "the loop under the shim failed"

calls() { awk -v k="$2" '$NF == k { print $4; f = 1 } END { if (!f) print 0 }' "$1"; }
total_with=$(calls with.txt total) total_without=$(calls without.txt total)
extra=$(( (total_with - total_without) / N ))
getpids=$(calls with.txt getpid)
mkdir -p out2
strace -f -e trace=readlink -o readlinks.txt -E LD_PRELOAD="$SHIM" -E PERFSCOPE_OUT="$PWD/out2" \
    bash -c "$loop" || fail "the loop under the shim failed (readlink trace)"
scan=$(grep -cE 'readlink\("/proc/[0-9]+/exe"' readlinks.txt)
readlinks=$(( $(grep -c 'readlink(' readlinks.txt) - scan ))
note "the machine check's readlink of other processes' exe links: $scan (once a run)"
note "per iteration: $((total_without / N)) calls without the shim, $((total_with / N)) with it (+$extra);" \
     "readlink $((readlinks * 100 / N / 100)).$((readlinks * 100 / N % 100)), getpid $((getpids * 100 / N / 100)).$((getpids * 100 / N % 100))"
exits=$(grep -c '"event":"exit"' out/procs.jsonl)
check "every process has its exit line ($exits of $((N + 1)))" [ "$exits" -eq $((N + 1)) ]
check "the shim adds $extra system calls a fork+exec (at most 320)" [ "$extra" -le 320 ]
check "$readlinks readlink calls in $N iterations (at most 2 each)" [ "$readlinks" -le $((2 * N)) ]
check "$getpids getpid calls in $N iterations (at most 30 each)" [ "$getpids" -le $((30 * N)) ]
checks_done
