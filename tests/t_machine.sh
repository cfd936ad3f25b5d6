#!/usr/bin/env bash
# t_machine: the machine check the shim and the matrix share (format/machine.c), built as the
# tools build it, over a fake /proc (machine_check_in): a process in state R counts as busy;
# kernel threads in state R never do (kthreadd, pid 2; its children; any with PF_KTHREAD in
# stat's flags, whatever its parent); nor do this process and its ancestors (the runner); a
# sleeping process never does. Then the real /proc: no kernel thread among the busy, and a
# process spinning beside it is named busy (the scan is skipped only when the kernel counts no
# runnable task but the checker's own threads), and the scan opens no kernel thread's stat file
# (strace: skipped as kthreadd's children, /proc/2/task/2/children read once, where the kernel
# has that file; else told apart by their missing executable first).
set -u
. "$ROOT/tests/lib.sh"
pkg-config --exists libcjson || skip "libcjson (pkg-config) missing"
W=$PWD
gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$ROOT/format" "$ROOT/tests/machine_unit.c" \
  "$ROOT/format/machine.c" "$ROOT/format/textfile.c" -o "$W/machine_unit" $(pkg-config --cflags --libs libcjson) \
  || fail "cannot build tests/machine_unit.c"
P=$W/proc
stat_line() { # pid comm state ppid flags
  mkdir -p "$P/$1"
  echo "$1 ($2) $3 $4 $1 $1 0 -1 $5 100 0 0 0 10 5 0 0 20 0 1 0 1000 0 0" >"$P/$1/stat"
}
stat_line 1 systemd S 0 4194560
stat_line 2 kthreadd R 0 2129984
stat_line 15 rcu_preempt R 2 2129984
stat_line 40 'kworker/0:1-events' R 2 69238880
stat_line 41 'odd kthread' R 1 2097152
stat_line 300 'busy one' R 1 4194304
stat_line 301 sleeper S 1 4194304
stat_line 302 'disk wait' D 1 4194304
# this process and its parent as the check sees them: running, yet never busy
stat_line $$ 'the runner' R $PPID 4194304
stat_line $PPID 'its parent' R 1 4194304
# the check walks up from the unit itself: its own entry names this shell as its parent
out=$(bash -c 'mkdir -p '"$P"'/$$ && echo "$$ (machine_unit) R '$$' 0 0 0 -1 4194304" >'"$P"'/$$/stat && exec '"$W"'/machine_unit '"$P")
printf '%s\n' "$out" | sed 's/^/# /'
check "only the user process in state R is busy" [ "$(printf '%s\n' "$out" | head -1)" = "busy 1: 300 busy one;" ]
check "the four kernel threads are counted apart" [ "$(printf '%s\n' "$out" | tail -1)" = "kernel 4" ]
# the real /proc: every busy one it names is a user process
real=$("$W/machine_unit" /proc)
printf '%s\n' "$real" | sed 's/^/# real: /'
for pid in $(printf '%s\n' "$real" | head -1 | sed 's/^busy [0-9]*://' | tr ';' '\n' | awk '{print $1}'); do
  [ -r "/proc/$pid/stat" ] || continue
  ppid=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $2}')
  flags=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $7}')
  check "real /proc: busy $pid is no kernel thread" test "$ppid" != 2 -a $((flags & 0x200000)) = 0
done
# the real /proc with a process spinning: the kernel's count of runnable tasks is more than the
# unit's own threads, so the scan runs (it is skipped only when every runnable task is the
# unit's own) and names the spinner
bash -c 'while :; do :; done' &
spin=$!
seen=0
for i in 1 2 3 4 5; do
  real=$("$W/machine_unit" /proc)
  case "$(printf '%s\n' "$real" | head -1)" in *" $spin bash;"*) seen=1; break ;; esac
done
kill "$spin"; wait "$spin" 2>/dev/null
check "real /proc: a spinning process is named busy ($real)" [ "$seen" = 1 ]
# the scan tells the kernel's threads by their missing executable (one readlink) and never
# opens their stat files (before: every one, 59 of a VM's 70 processes), counted by strace
if command -v strace >/dev/null 2>&1; then
  bash -c 'while :; do :; done' &
  spin=$!
  ran=0
  for i in 1 2 3 4 5; do
    strace -f -e trace=openat,readlink -o scan.txt "$W/machine_unit" /proc >/dev/null 2>&1
    grep -q "\"/proc/$spin/stat\"" scan.txt && { ran=1; break; }
  done
  kill "$spin"; wait "$spin" 2>/dev/null
  # the kernel's threads: PF_KTHREAD in stat's flags (a helper the kernel starts has kthreadd
  # for its parent but runs a program of its own)
  kt=$(for f in /proc/[0-9]*/stat; do sed 's/.*) //' "$f" 2>/dev/null |
         awk -v p="${f//[^0-9]/}" '{ if (int($7 / 2097152) % 2) print p }'; done | sort)
  opened=$(grep -oE '"/proc/[0-9]+/stat"' scan.txt | grep -oE '[0-9]+' | sort -u)
  n=$(comm -12 <(printf '%s\n' "$kt") <(printf '%s\n' "$opened") | grep -c .)
  note "scan: $(printf '%s\n' "$opened" | grep -c .) stat files opened, $n of the $(printf '%s\n' "$kt" | grep -c .) kernel threads"
  check "real /proc: the scan ran with a process spinning beside it" [ "$ran" = 1 ]
  check "real /proc: the scan opened $n kernel threads' stat files (none)" [ "$n" -eq 0 ]
  # where the kernel lists kthreadd's children, they are skipped from that one read: no
  # readlink a process (before: one for each of the machine's processes), only pid 2's, which
  # says pid 2 is the kernel's
  if [ -n "$(cat /proc/2/task/2/children 2>/dev/null)" ]; then
    links=$(grep -cE 'readlink\("/proc/[0-9]+/exe"' scan.txt)
    note "scan: $links exe links read, of $(ls -d /proc/[0-9]* | wc -l) processes"
    check "real /proc: kthreadd's children skipped from its list ($links exe links read, 1 expected)" \
      [ "$links" -eq 1 ]
  fi
fi
checks_done
