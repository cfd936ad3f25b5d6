#!/usr/bin/env bash
# t_tools_container: `perfscope record -- docker run ...` against the real daemon
# (docs/containers.md). The image is built offline (tests/container_lib.sh): the known-phase
# engine tests/targets/c_engine.c at /opt/psengine/bin/engine, a path the host does not have, so
# its names can only come from the image; its ldd libraries; /bin/sh (dash).
# 1. `docker run --rm --user 4321:4321 --security-opt seccomp=PROFILE IMAGE engine`, PROFILE
#    refusing perf_event_open (as Docker's default profile does here: forced, so the test does
#    not depend on the daemon's default), with --clock perf asked: the exit status (7) and stdout
#    passed through; the tick timer serves, meta.json says so and why, the log says it once;
#    libunwind (loaded from beside the shim) walks most stacks; samples in each phase marked from inside, in the engine's own functions, named from the
#    image (symfs) in profile.json, stacks.folded and profile.pb.gz; container image and id in
#    run.json; the container gone (`docker ps -a` by image); the run folder's files, written by
#    uid 4321 inside, owned by the user who ran perfscope, the folder 0755 again.
# 2. the same without the seccomp profile but seccomp=unconfined: perf events serve where the
#    host allows them (the shim's choice, not perfscope's: it adds no security option).
# 3. NSpid: `sh -c 'echo ... >>$LLMPERFSCOPE_MARKERS; engine fork; ...'`: three processes inside;
#    container.json maps every pid of procs.jsonl to a distinct host pid, the first to docker
#    inspect's; container.pids holds the same map; the shell's echo marked a phase.
# 4. SIGTERM to perfscope record while a hanging engine runs (under --init, so SIGTERM reaches
#    it): perfscope stops the container itself (docker stop), the client's status (143) is
#    passed through, and the container is gone.
set -u
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/container_lib.sh"
need_shim
need_tool perfscope
need_docker
[ -f "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
[ -f "$(dirname "$SHIM")/container/libperfscope.so" ] || fail "no container shim beside $SHIM (make)"
[ ! -e /opt/psengine ] || fail "/opt/psengine exists on the host: the test needs a path only the image has"
build_target c_engine
IMAGE=perfscope-test-engine-$$
mkdir img
add_file img "$TBUILD/c_engine" /opt/psengine/bin/engine
make_image "$IMAGE" img
cat >noperf.json <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["perf_event_open"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
EOF
perf_ok=0
perf_events_allowed && perf_ok=1

t0=$EPOCHREALTIME
"$TOOL" record -o out --clock perf -- docker run --rm --user 4321:4321 \
  --security-opt seccomp="$PWD/noperf.json" "$IMAGE" /opt/psengine/bin/engine >out.stdout 2>out.stderr
rc=$?
t1=$EPOCHREALTIME
"$TOOL" record -o perf --clock perf --no-report -- docker run --rm --security-opt seccomp=unconfined \
  "$IMAGE" /opt/psengine/bin/engine >perf.stdout 2>perf.stderr
rc2=$?
"$TOOL" record -o tree --no-report -- docker run --rm "$IMAGE" /bin/sh -c \
  'echo "outer begin" >>"$LLMPERFSCOPE_MARKERS"; /opt/psengine/bin/engine fork; rc=$?; echo "outer end" >>"$LLMPERFSCOPE_MARKERS"; exit $rc' \
  >tree.stdout 2>tree.stderr
rc3=$?
"$TOOL" record -o hang --no-report -- docker run --rm --init "$IMAGE" /opt/psengine/bin/engine hang \
  >hang.stdout 2>hang.stderr &
rec=$!
for _ in $(seq 300); do [ -s hang/container.pids ] && grep -q 'load end' hang/markers 2>/dev/null && break; sleep 0.1; done
check "the hanging engine never got going: $(tail -n 3 hang.stderr)" grep -q 'load end' hang/markers
kill -TERM $rec
wait $rec
rc4=$?
check "record after SIGTERM: exit $rc4 (want 143): $(tail -n 3 hang.stderr)" [ "$rc4" -eq 143 ]
check "stopped by perfscope: $(cat hang/container.json)" grep -q '"stopped_by_perfscope":.*true' hang/container.json
note "record through docker: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s wall for run 1"
check "exit status passed through: $rc (stderr: $(tail -n 3 out.stderr))" [ "$rc" -eq 7 ]
check "stdout passed through: $(cat out.stdout)" [ "$(cat out.stdout)" = "engine done" ]
check "run 2 exit $rc2: $(tail -n 3 perf.stderr)" [ "$rc2" -eq 7 ]
check "run 3 exit $rc3: $(tail -n 3 tree.stderr)" [ "$rc3" -eq 7 ]
left=$(docker ps -aq --filter "ancestor=$IMAGE")
check "no container left behind: $left" [ -z "$left" ]
others=$(find out perf tree ! -user "$(id -u)" -o ! -group "$(id -g)" | head -n 3)
check "files not given back to $(id -u):$(id -g): $others" [ -z "$others" ]
check "run folder mode $(stat -c %a out)" [ "$(stat -c %a out)" = 755 ]

py_check container - "$IMAGE" "$perf_ok" <<'EOF'
import gzip, json, os, sys
from checks import check, require, finish

image, perf_ok = sys.argv[1], sys.argv[2] == "1"
meta = json.load(open("out/meta.json"))
s = meta["sampling"]
check(s["clock"] == "timer" and "perf_event_open refused" in s["why"], "clock: %s" % s)
log = open("out/perfscope.log").read().splitlines()
refused = [l for l in log if "perf events refused" in l]
check(len(refused) == 1, "the refusal said once: %s" % log)
# libunwind, loaded with dlopen from beside the shim (its liblzma too), walked the stacks.
check(s.get("unwind") == "libunwind" and not [l for l in log if "cannot load" in l],
      "unwinder %r, log %s" % (s.get("unwind"), log))
check(s.get("samples", 0) > 0 and s.get("samples_without_libunwind", 0) < s.get("samples", 0) / 2,
      "samples %s, without libunwind %s" % (s.get("samples"), s.get("samples_without_libunwind")))
check(meta["executable"] == "/opt/psengine/bin/engine", "executable %s" % meta.get("executable"))
phases = [json.loads(l) for l in open("out/phases.jsonl") if l.strip()]
check({p.get("name") for p in phases} >= {"load", "decode"}, "phases from inside: %s" % phases)
run = json.load(open("out/run.json"))
check(run.get("container_image") == image, "run.json container_image %s" % run.get("container_image"))
check(str(run.get("container_image_id", "")).startswith("sha256:"), "image id %s" % run.get("container_image_id"))
c = json.load(open("out/container.json"))
check(c["host_pid"] > 0 and c["user_rm"] is True and c["symfs"]["files"] >= 2 and c["symfs"]["failed"] == 0,
      "container.json %s" % c)
check(os.path.isfile("out/symfs/opt/psengine/bin/engine"), "the engine copied into symfs")
# Samples per phase, in the engine's own functions, named from the image.
folded = {}
for line in open("out/stacks.folded"):
    stack, n = line.rsplit(" ", 1)
    folded[stack] = folded.get(stack, 0) + int(n)
def count(group, fn):
    return sum(n for st, n in folded.items() if st.split(";")[0] == group and st.split(";")[-1] == fn)
hz = s["hz_asked"]
for group, fn, secs in (("load", "burn_load", 0.3), ("decode", "burn_decode", 0.5)):
    n = count(group, fn)
    print("# %s: %d samples in %s (%.2f CPU s at %d Hz would be %.0f)" % (group, n, fn, secs, hz, secs * hz))
    check(n >= 0.3 * secs * hz, "%s: %d samples of %s in the folded stacks" % (group, n, fn))
prof = json.load(open("out/profile.json"))
mods = [m for m in prof["modules"] if m.get("path") == "/opt/psengine/bin/engine"]
check(len(mods) == 1 and mods[0]["status"] == "ok", "the engine's module: %s" % mods)
check("burn_decode" in json.dumps(prof), "burn_decode named in profile.json")
check(b"burn_load" in gzip.open("out/profile.pb.gz").read(), "burn_load named in pprof")
total = sum(folded.values())
print("# samples %d; sampled CPU %.3f s; %d samples at %d Hz stand for %.3f s" %
      (s["samples"], s["sampled_cpu_s"], total, hz, total / hz))
print("# symbol copy: %.3f s for %d files" % (c["symfs"]["copy_s"], c["symfs"]["files"]))
# 2. unconfined: perf events where the host allows them.
m2 = json.load(open("perf/meta.json"))["sampling"]
if perf_ok:
    check(m2["clock"] == "perf", "unconfined, perf allowed on the host: %s" % m2)
else:
    print("# perf events not allowed on this host: run 2 only checked for the timer: %s" % m2["clock"])
    check(m2["clock"] == "timer", "run 2 clock %s" % m2)
# 3. NSpid: every pid of procs.jsonl maps to a distinct host pid.
procs = {json.loads(l)["pid"] for l in open("tree/procs.jsonl") if l.strip()}
t = json.load(open("tree/container.json"))
pmap = {p["pid"]: p["host_pid"] for p in t["pids"]}
print("# pids inside %s -> host %s" % (sorted(procs), pmap))
check(len(procs) >= 3, "sh, engine and its child: %s" % procs)
check(procs <= set(pmap), "pids without a host pid: %s" % (procs - set(pmap)))
check(pmap.get(1) == t["host_pid"], "pid 1 is docker inspect's %s: %s" % (t["host_pid"], pmap))
hosts = [pmap[p] for p in procs if p in pmap]
check(len(set(hosts)) == len(hosts) and all(h > 0 for h in hosts), "host pids %s" % hosts)
kept = {}
for line in open("tree/container.pids"):
    a, b = line.split()
    kept[int(a)] = int(b)
check(kept == pmap, "container.pids %s, container.json %s" % (kept, pmap))
tphases = {json.loads(l).get("name") for l in open("tree/phases.jsonl") if l.strip()}
check({"outer", "child", "decode"} <= tphases, "echo from the shell and the engine's marks: %s" % tphases)
finish()
EOF
checks_done
