#!/usr/bin/env bash
# t_tools_report_cputime: the report's CPU column says which CPU time it counts, and counts it.
# tests/targets/t_syscalls spends a phase "sys" mostly in the kernel (read() from /dev/zero) and a
# phase "user" in its own code, and prints its own user and system time per phase. Under the perf
# clock (user time only: an expiry in the kernel is never signalled) the header is "CPU s (user)"
# and the "sys" phase's CPU s is its user time, far below its user+sys; under the tick timer (the
# thread's CPU clock: user and system) it is "CPU s (user+sys)" and near user+sys. run.json's
# sampling.cpu_counts and profile.pb.gz's comment say the same. Ratios only, no timings.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
build_target t_syscalls -I"$ROOT/include"
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0

clocks="timer"
if perf_events_allowed; then clocks="perf timer"; else note "perf events not allowed here: the timer clock alone"; fi
for clock in $clocks; do
  rm -rf "out-$clock"
  LD_PRELOAD=$SHIM PERFSCOPE_OUT=out-$clock PERFSCOPE_HZ=997 PERFSCOPE_CLOCK=$clock "$TBUILD/t_syscalls" >"$clock.json" \
    || fail "t_syscalls under the $clock clock: exit $?"
  "$TOOL" "out-$clock" >"$clock.report" 2>"$clock.err" || fail "perfscope-report out-$clock: $(cat "$clock.err")"
  CLOCK=$clock py_check "$clock clock" - <<'PY'
import gzip, json, os
from checks import check, finish
def info(m): print("# " + m)
clock = os.environ["CLOCK"]
me = json.load(open(clock + ".json"))
rj = json.load(open("out-%s/run.json" % clock))
md = open("out-%s/report.md" % clock).read()
head = "CPU s (user)" if clock == "perf" else "CPU s (user+sys)"
check("| %s |" % head in md, "%s clock: the phases table's header says %r: %s"
      % (clock, head, [l for l in md.splitlines() if l.startswith("| group")]))
check(rj.get("sampling", {}).get("cpu_counts") == ("user" if clock == "perf" else "user+sys"),
      "run.json sampling.cpu_counts %r" % rj.get("sampling"))
for g in ("sys", "user"):
    cpu = rj["groups"][g].get("cpu_s", -1)
    u, s = me[g]["user_s"], me[g]["sys_s"]
    info("%s clock, phase %s: CPU s %.3f; the target measured user %.3f, sys %.3f" % (clock, g, cpu, u, s))
    if g == "sys":
        check(s > 2 * u, "the sys phase is mostly kernel time: user %.3f sys %.3f" % (u, s))
        if clock == "perf":
            check(cpu < 0.5 * (u + s) and cpu < u + 0.25 * s,
                  "perf clock: CPU s %.3f counts user time (%.3f), not user+sys (%.3f)" % (cpu, u, u + s))
        else:
            check(cpu > 0.7 * (u + s), "timer: CPU s %.3f counts user+sys (%.3f)" % (cpu, u + s))
    else:
        check(abs(cpu - (u + s)) < 0.3 * (u + s), "user phase: CPU s %.3f near its %.3f CPU s" % (cpu, u + s))
pb = "out-%s/profile.pb.gz" % clock
if os.path.exists(pb):
    raw = gzip.open(pb).read()
    want = b"cpu: user CPU time only" if clock == "perf" else b"cpu: user and system CPU time"
    check(want in raw, "profile.pb.gz has the comment %r" % want)
else:
    check(False, "no profile.pb.gz")
finish()
PY
done
checks_done
