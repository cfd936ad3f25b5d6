#!/usr/bin/env bash
# t_shim_sampling_figures: the run's sampling figures cover every process, not only the leader.
# A shell leader runs two t_burn children at once, then burns in a loop of its own and execs a
# third t_burn. Every exit and exec line of procs.jsonl carries that image's own figures
# (samples, distinct_samples, sampled_cpu_s, ...); the exec'd image counts its own CPU only, not
# its predecessor's (getrusage goes on across exec); run.json's sampling sums them: its samples
# are the sample files' records, its sampled CPU s the children's measured CPU, and hz_delivered
# (distinct samples over the CPU the clock samples, one base) is near the asked rate under the
# perf clock. meta.json's sampling.run has the same sums (the leader ends last here).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope-report
build_target t_burn
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
perf_events_allowed || skip "perf events not allowed here: the figures' 997 Hz check needs the perf clock"

B=$TBUILD/t_burn
LD_PRELOAD=$SHIM PERFSCOPE_OUT=$PWD/out PERFSCOPE_HZ=997 PERFSCOPE_CLOCK=perf bash -c "
  '$B' 0.4 '$PWD/burns' a & '$B' 0.4 '$PWD/burns' b; wait
  i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); done
  exec '$B' 0.3 '$PWD/burns' c" || fail "the run: exit $?"
"$TOOL" out >report.md 2>report.err || fail "perfscope-report: $(cat report.err)"

py_check "figures" - <<'PY'
import glob, json, sys
from checks import check, finish
from samples import read_samples
lines = [json.loads(l) for l in open("out/procs.jsonl")]
burns = {j["tag"]: j for j in map(json.loads, open("burns"))}
ends = [l for l in lines if l["event"] in ("exit", "exec")]
check(len([l for l in lines if l["event"] == "exit"]) >= 3, "exit lines: %r" % ends)
for l in ends:
    s = l.get("sampling")
    check(isinstance(s, dict) and all(isinstance(s.get(k), (int, float)) for k in
          ("samples", "distinct_samples", "sampled_cpu_s", "shim_threads_cpu_s", "unsampled_cpu_s")),
          "pid %d %s line has the image's figures: %r" % (l["pid"], l["event"], s))
by = {(l["pid"], l["event"]): l.get("sampling", {}) for l in ends}
c = burns["c"]
ex = by.get((c["pid"], "exit"), {})
check(ex and abs(ex.get("sampled_cpu_s", 0) - 0.3) < 0.1 and c["cpu_ns"] / 1e9 > 0.45,
      "the exec'd image counts its own CPU (0.3 s burned; the process's %.3f s with the shell's): %r"
      % (c["cpu_ns"] / 1e9, ex))
check(by.get((c["pid"], "exec"), {}).get("sampled_cpu_s", 0) > 0.05,
      "the exec line has the shell's loop: %r" % by.get((c["pid"], "exec")))
rj = json.load(open("out/run.json"))["sampling"]
records = sum(len(read_samples(p).samples) for p in glob.glob("out/cpuprof.*.bin"))
check(rj.get("distinct_samples") == records and rj.get("samples") == records,
      "run.json sums every image: %r distinct, %r samples, the files hold %d" % (rj.get("distinct_samples"), rj.get("samples"), records))
burned = 0.4 + 0.4 + 0.3 + by.get((c["pid"], "exec"), {}).get("sampled_cpu_s", 0)
check(0.9 * burned <= rj.get("sampled_cpu_s", 0) < burned + 0.3,
      "sampled CPU s %r: the burns (user+sys) and the shell's loop, %.3f" % (rj.get("sampled_cpu_s"), burned))
check(rj.get("images_with_figures") == len(ends), "images with figures %r of %d lines" % (rj.get("images_with_figures"), len(ends)))
hz = rj.get("hz_delivered", 0)
check(0.9 * 997 < hz < 1.1 * 997, "hz_delivered %r near 997 asked (perf clock: samples and CPU both user time)" % hz)
print("# run: %d samples over %.3f sampled CPU s: %.1f Hz delivered" % (records, rj.get("sampled_cpu_s", 0), hz))
meta = json.load(open("out/meta.json"))["sampling"].get("run", {})
check(meta.get("images") == len(ends) and meta.get("distinct_samples") == records
      and abs(meta.get("sampled_cpu_s", 0) - rj.get("sampled_cpu_s", -1)) < 1e-3,
      "meta.json's sampling.run sums every process (the leader ends last here): %r" % meta)
md = open("out/report.md").read()
check("- delivered: %.0f distinct samples per sampled CPU s" % hz in md,
      "the report says the delivered rate, of distinct samples (%.0f): %r"
      % (hz, [l for l in md.splitlines() if "delivered" in l]))
finish()
PY
checks_done
