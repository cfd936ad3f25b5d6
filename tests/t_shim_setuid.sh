#!/usr/bin/env bash
# t_shim_setuid: a setuid target (AT_SECURE) is left alone.
# Needs root (to make a root-owned setuid copy) and setpriv (to run it as nobody). The loader
# ignores LD_PRELOAD paths in a secure exec, so the target loads the shim itself with dlopen:
# its constructor then runs with getauxval(AT_SECURE) = 1, and must not measure: no SIGPROF
# handler, no sample files, no files created by the root-privileged process beyond perfscope.log,
# same output, at most one line on stderr. A control run of the same target, not setuid, shows
# that the shim loaded this way does measure (else the secure run would prove nothing).
# The checks of the secure run go on after a failure (lib.sh check), the count at the end.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_suid
[ "$(id -u)" = 0 ] || skip "needs root to make a setuid-root copy of a target"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux) to run the target as nobody"
nobody_uid=$(id -u nobody 2>/dev/null) || skip "no user nobody"
nobody_gid=$(id -g nobody)

# control: not setuid, as root; the shim loaded by dlopen measures
ctl=$(LD_PRELOAD= PERFSCOPE_OUT=$PWD/ctl-out PERFSCOPE_HZ=199 "$TBUILD/t_suid" "$SHIM" any 2>ctl.err)
rc=$?
[ $rc = 0 ] || fail "control run: exit $rc: $ctl $(cat ctl.err)"
if ! ls ctl-out/cpuprof.*.bin >/dev/null 2>&1; then
    skip "the shim loaded with dlopen does not sample (no ctl-out/cpuprof.*.bin), so a secure run cannot be told apart"
fi
note "control: $ctl"

chmod 755 "$PWD"
d=$PWD/suid
mkdir "$d"
cp "$TBUILD/t_suid" "$d/t_suid"
cp "$SHIM" "$d/libperfscope.so"
chown root:root "$d" "$d/t_suid" "$d/libperfscope.so"
chmod 755 "$d" "$d/libperfscope.so"
chmod 4755 "$d/t_suid"
out=$(setpriv --reuid="$nobody_uid" --regid="$nobody_gid" --clear-groups \
      env LD_PRELOAD="$d/libperfscope.so" PERFSCOPE_OUT="$d/out" PERFSCOPE_HZ=997 \
      LLMPERFSCOPE_MARKERS="$d/markers" "$d/t_suid" "$d/libperfscope.so" 2>suid.err)
rc=$?
note "setuid run: exit $rc, stdout: $out, stderr: $(cat suid.err)"
[ "$out" = "not secure" ] && skip "the setuid copy did not run secure (nosuid mount?)"
check "setuid target under the shim: exit $rc, stdout $out, stderr $(cat suid.err)" [ $rc = 0 ]
check "setuid target: expected 'secure 1 sigprof dfl' (not measured), got '$out'" [ "$out" = "secure 1 sigprof dfl" ]
check "setuid target: more than one line on stderr: $(cat suid.err)" [ "$(wc -l <suid.err)" -le 1 ]
check "the shim created the markers file $d/markers in a setuid target" [ ! -e "$d/markers" ]
if [ -e "$d/out" ]; then
    extra=$(cd "$d/out" && ls -A | grep -vx perfscope.log)
    check "the shim wrote into PERFSCOPE_OUT of a setuid target: $extra" [ -z "$extra" ]
fi
checks_done
