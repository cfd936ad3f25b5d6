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
# leader's watcher: a kernel thread has none) is counted apart, from a second traced run. Then the
# shim's layout (its small written variables in at most 4 pages, from readelf) and the page faults
# it adds a fork+exec (at most 145, wait4's count: 124-131 here with the layout, 151-166 without);
# the task folder read for threads to adopt only where there are any (getdents64).
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
strace -f -y -e trace=readlink,getdents64 -o readlinks.txt -E LD_PRELOAD="$SHIM" -E PERFSCOPE_OUT="$PWD/out2" \
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
# A one-thread image does not read /proc/self/task for threads to adopt (one stat tells it): the
# reads of a /proc/<pid>/task folder (strace -y names them), 2 an iteration before; what is left is
# the leader's machine check (4 in 20 iterations). Other folders (a powercap tree) do not count.
task_reads=$(grep -cE 'getdents64\([0-9]+</proc/[0-9]+/task>' readlinks.txt)
check "$task_reads reads of a task folder in $N iterations (at most $((N / 2)))" [ "$task_reads" -le $((N / 2)) ]

# The shim's small written variables (.data and .bss objects under 32 bytes: scalars, pointers,
# small structs; not the thread-local ones), which every process writes at its start and a fork
# child copies on write, packed into a few pages by the shim's layout (Makefile, SHIM_LAYOUT): 2
# pages, 23 without it. readelf gives a size of 100000 or more in hex.
command -v readelf >/dev/null 2>&1 || fail "readelf (binutils) is not installed"
written=$(readelf -SW "$SHIM" | awk '{ sub(/^ *\[ */, ""); sub(/\]/, "") } $2 == ".data" || $2 == ".bss" { printf "|%s|", $1 }')
small_pages=$(readelf -sW "$SHIM" | awk -v secs="$written" '$4 == "OBJECT" && $3 !~ /^0x/ && $3 + 0 < 32 && index(secs, "|" $7 "|") { print substr($2, 1, length($2) - 3) }' | sort -u | wc -l)
in_few=0; [ "$small_pages" -ge 1 ] && [ "$small_pages" -le 4 ] && in_few=1
check "the shim's small written variables lie in $small_pages pages (at most 4)" [ "$in_few" = 1 ]

# The page faults the shim adds a fork+exec (wait4's minor faults of the loop, shell and children),
# a count, never a time: 124-131 on the development VM, 151-166 before the layout above. The
# leader's one-time start is spread over 100 iterations, without RAPL or NVML, whose opening where
# they exist would add to it.
faults() {
    python3 - "$@" <<'PY'
import os, sys
env = dict(os.environ)
for kv in sys.argv[1:]:
    k, v = kv.split("=", 1)
    env[k] = v
pid = os.fork()
if pid == 0:
    os.execve("/bin/bash", ["bash", "-c", "for ((i = 0; i < 100; i++)); do /bin/true; done"], env)
_, status, ru = os.wait4(pid, 0)
print(ru.ru_minflt if status == 0 else -1)
PY
}
f_without=$(faults) f_with=$(faults LD_PRELOAD="$SHIM" PERFSCOPE_OUT="$PWD/out3" \
    PERFSCOPE_POWERCAP_ROOT=/nonexistent PERFSCOPE_NVML=/nonexistent/libnvidia-ml.so.1)
extra_faults=$(( (f_with - f_without) / 100 ))
note "page faults a fork+exec: $((f_without / 100)) without the shim, $((f_with / 100)) with it (+$extra_faults)"
few_faults=0; [ "$f_with" -gt 0 ] && [ "$f_without" -gt 0 ] && [ "$extra_faults" -le 145 ] && few_faults=1
check "the shim adds $extra_faults page faults a fork+exec (at most 145)" [ "$few_faults" = 1 ]
checks_done
