#!/usr/bin/env bash
# t_counters: the shim's counters module (preload/counters/) against fixtures: a powercap tree
# (zones, sub-zones, unreadable counters, a raw wraparound), a fake NVML (energy at a set power,
# per-process memory of the run's pids only, the INSUFFICIENT_SIZE protocol, the no-permission
# fallback, missing symbols, a failing init, a missing library) and RssAnon from /proc.
# tests/counters_unit.c drives the module (built here from preload/counters/*.c, as the shim
# builds it); each run's readings are checked by a Python block (tests/checks.py, its lines named
# after the run), the driver's exit and stderr by the shell (lib.sh check); one count at the end.
# Run from an empty folder with ROOT (and BUILD) set, as tests/run.sh does.
set -u
. "$ROOT/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 missing"
pkg-config --exists libcjson || skip "libcjson (pkg-config) missing"

W=$PWD
CF="-std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE"
CJ="$(pkg-config --cflags --libs libcjson)"
SRC=("$ROOT"/preload/counters/*.c "$ROOT/preload/fdcache.c" "$ROOT/preload/fdheld.c" "$ROOT/preload/shimload.c" "$ROOT/preload/fdgate.c")
# The sources as the shim builds them, warnings included.
for f in "${SRC[@]}"; do
  gcc $CF -fno-omit-frame-pointer -I"$ROOT/include" -I"$ROOT/format" -I"$ROOT/preload" -fPIC -pthread \
    -ftls-model=initial-exec -fvisibility=hidden $(pkg-config --cflags libcjson) \
    -c "$f" -o "$W/$(basename "$f" .c).o" || fail "$f does not build as the shim builds it"
done
gcc $CF -I"$ROOT/include" -I"$ROOT/format" -I"$ROOT/preload" "$ROOT/tests/counters_unit.c" "${SRC[@]}" \
  -o "$W/counters_unit" $CJ -ldl -pthread || fail "cannot build tests/counters_unit.c"
gcc $CF -fPIC -shared -o "$W/fake_nvml.so" "$ROOT/tests/fixtures/fake_nvml.c" \
  || fail "cannot build the fake NVML"
gcc $CF -fPIC -shared -DFAKE_NVML_NO_ENERGY -o "$W/fake_nvml_noenergy.so" \
  "$ROOT/tests/fixtures/fake_nvml.c" || fail "cannot build the fake NVML without energy"

U=$W/counters_unit
PC=$W/powercap

# ---- the powercap fixture
zone() { # dir name energy max
  mkdir -p "$1"; echo "$2" >"$1/name"; echo "$3" >"$1/energy_uj"
  echo "$4" >"$1/max_energy_range_uj"; }
zone "$PC/intel-rapl:0" package-0 123456789 262143328850
zone "$PC/intel-rapl:0/intel-rapl:0:0" core 2000000 262143328850
zone "$PC/intel-rapl:0/intel-rapl:0:1" dram 3000000 65712999613
ln -s "intel-rapl:0/intel-rapl:0:0" "$PC/intel-rapl:0:0"     # also at the top, as in sysfs
zone "$PC/intel-rapl:1" package-1 1 262143328850
rm "$PC/intel-rapl:1/energy_uj"; mkdir "$PC/intel-rapl:1/energy_uj"  # read fails: EISDIR
zone "$PC/intel-rapl:1/intel-rapl:1:0" dram 1 65712999613
rm "$PC/intel-rapl:1/intel-rapl:1:0/energy_uj"
ln -s "$W/nowhere" "$PC/intel-rapl:1/intel-rapl:1:0/energy_uj"    # dangling: ENOENT
mkdir -p "$PC/intel-rapl"                                        # the control type: not a zone
zone "$PC/intel-rapl-mmio:0" package-0 999 262143328850          # the MMIO twin: never added

# run NAME [env...] -- steps...: stdout NAME.jsonl, stderr NAME.err, log NAME.log
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  rm -f "$W/$name.log"
  ( export COUNTERS_UNIT_LOG="$W/$name.log"; for e in "${envs[@]}"; do export "$e"; done
    [ -n "${SELF_PROCS_VAR:-}" ] && export "$SELF_PROCS_VAR=${SELF_PROCS_VAL//SELF/$BASHPID}"
    exec "$U" "$@" ) >"$W/$name.jsonl" 2>"$W/$name.err"
  local rc=$?
  check "$name: driver exit $rc: $(cat "$W/$name.err")" [ $rc -eq 0 ]
  check "$name: stderr not empty: $(cat "$W/$name.err")" [ ! -s "$W/$name.err" ]
  touch "$W/$name.log"
}
# check_reads NAME [ARGS...]: the Python checks on stdin, with R (the reads), LOG (log lines),
# ARGS, and check() from tests/checks.py (each failed line named NAME)
check_reads() {
  local name=$1
  py_check "$name" - "$W/$name.jsonl" "$W/$name.log" "$name" "${@:2}" <<PY
import json, sys
import checks
from checks import check, finish
R = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
LOG = open(sys.argv[2]).read().splitlines()
NAME = sys.argv[3]; ARGS = sys.argv[4:]
checks.prefix = NAME + ": "
def lines(s): return [l for l in LOG if s in l]
def rss(pid):
    for l in open("/proc/%s/status" % pid):
        if l.startswith("RssAnon:"): return int(l.split()[1])
for r in R:
    check(set(["rapl", "gpus", "rss_anon_by_pid"]) <= set(r), "keys missing in %s" % sorted(r))
$(cat)
finish()
PY
}

sleep 60 & CHILD=$!
# a zombie: its parent execs into sleep and never reaps it (no memory, no VmRSS: not an error)
bash -c 'sleep 0 & echo $! >zombie.pid; exec sleep 60' & ZPARENT=$!
trap 'kill $CHILD $ZPARENT 2>/dev/null' EXIT
is_zombie() { [ -s zombie.pid ] && grep -q '^State:.*Z' "/proc/$(cat zombie.pid)/status" 2>/dev/null; }
# up to 10 s: on a loaded machine the two shells may take their time (a precondition, not a timing check)
for _ in $(seq 100); do is_zombie && break; sleep 0.1; done
ZOMBIE=$(cat zombie.pid)
check "no zombie to test with" is_zombie

# ---- 1. RAPL zones, errors logged once, raw wraparound; a missing NVML library
run rapl PERFSCOPE_POWERCAP_ROOT="$PC" PERFSCOPE_NVML="$W/no-such-libnvidia-ml.so.1" -- \
  pids:self open read "write:$PC/intel-rapl:0/energy_uj=100" read read close open read close
check_reads rapl <<'PY'
check(len(R) == 4, "4 reads, got %d" % len(R))
z = [e["zone"] for e in R[0]["rapl"]]
check(z == ["intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:1", "intel-rapl:1", "intel-rapl:1:0"],
      "zones %s" % z)
by = {e["zone"]: e for e in R[0]["rapl"]}
want = {"intel-rapl:0": ("package-0", 123456789, 262143328850),
        "intel-rapl:0:0": ("core", 2000000, 262143328850),
        "intel-rapl:0:1": ("dram", 3000000, 65712999613)}
for k, (n, e, m) in want.items():
    d = by.get(k, {})
    check(d.get("name") == n and d.get("energy_uj") == e and d.get("max_energy_range_uj") == m
          and "error" not in d, "%s: %s" % (k, d))
for k, reason in (("intel-rapl:1", "Is a directory"), ("intel-rapl:1:0", "No such file")):
    d = by.get(k, {})
    check("energy_uj" not in d and reason in d.get("error", ""), "%s: %s" % (k, d))
    n = [l for l in LOG if ("zone %s " % k) in l]
    check(len(n) == 1 and reason in n[0], "%s logged %d times: %s" % (k, len(n), n))
w = {e["zone"]: e for e in R[1]["rapl"]}["intel-rapl:0"]
check(w.get("energy_uj") == 100 and w.get("max_energy_range_uj") == 262143328850,
      "wraparound must be reported raw: %s" % w)
for r in R:
    check(r["gpus"] == [], "gpus without NVML: %s" % r["gpus"])
n = lines("NVML not loaded")
check(len(n) == 1 and "no-such-libnvidia-ml.so.1" in n[0], "NVML absence logged once: %s" % n)
check(len(LOG) == 3, "log lines: %s" % LOG)
PY

# ---- 1b. a zone's file replaced by rename between two reads: the second read is the new file's
# (the shim reads through a kept descriptor, which must follow the path, not the old inode)
run rapl_moved PERFSCOPE_POWERCAP_ROOT="$PC" PERFSCOPE_NVML="$W/no-such-libnvidia-ml.so.1" -- \
  pids:self open read "move:$PC/intel-rapl:0/energy_uj=555" read close
check_reads rapl_moved <<'PY'
check(len(R) == 2, "2 reads, got %d" % len(R))
e = [{z["zone"]: z for z in r["rapl"]}.get("intel-rapl:0", {}).get("energy_uj") for r in R]
check(e[1] == 555, "after the file was renamed over, intel-rapl:0 reads %s (then %s): the old file's" % (e[1], e[0]))
PY

# ---- 2. fake NVML, 2 GPUs: energy at the set power, run memory of our pids only
FILL=$(python3 -c 'print(",".join("%d:%d" % (3000000 + i, 1 << 30) for i in range(300)))')
SELF_PROCS_VAR=FAKE_NVML_PROCS_0 SELF_PROCS_VAL="SELF:1073741824,$CHILD:536870912,4242:8589934592" \
run nvml PERFSCOPE_POWERCAP_ROOT="$W/nothing" PERFSCOPE_NVML="$W/fake_nvml.so" FAKE_NVML_GPUS=2 \
  FAKE_NVML_POWER_MW=150000,60000 FAKE_NVML_MEM_USED_MIB=30000,2048 \
  FAKE_NVML_PROCS_1="$FILL,$CHILD:268435456" FAKE_NVML_CALLS="$W/nvml.calls" -- \
  "pids:self,$CHILD,self,2147483647" open read sleep:600 read close read open read
check_reads nvml <<'PY'
check(len(R) == 4, "4 reads, got %d" % len(R))
check(len(R) > 2 and R[2]["gpus"] == [] and R[2]["rapl"] == [], "after close: %s" % R[2:3])
R = R[:2] + R[3:]
check(R[0]["rapl"] == [], "rapl without powercap: %s" % R[0]["rapl"])
for r in R:
    g = r["gpus"]
    check([x.get("index") for x in g] == [0, 1], "gpus %s" % g)
    check(all(isinstance(x.get("energy_mj"), int) for x in g), "energy_mj %s" % g)
    if len(g) != 2: break
    check(g[0].get("power_mw") == 150000 and g[1].get("power_mw") == 60000, "power %s" % g)
    check(g[0].get("mem_used_mib") == 30000 and g[1].get("mem_used_mib") == 2048, "mem_used %s" % g)
    check(g[0].get("run_mem_mib") == 1536, "gpu0 run_mem_mib %s (self 1024 + child 512)" % g[0])
    check(g[1].get("run_mem_mib") == 256, "gpu1 run_mem_mib %s (child 256 among 300)" % g[1])
    check(all(x.get("procs_listed") is True for x in g), "procs_listed %s" % g)
if len(R) == 2 and all(len(r["gpus"]) == 2 for r in R):
    dt = (R[1]["t_ns"] - R[0]["t_ns"]) / 1e9
    for i, p in ((0, 150000), (1, 60000)):
        de = R[1]["gpus"][i]["energy_mj"] - R[0]["gpus"][i]["energy_mj"]
        check(abs(de / dt - p) <= 0.02 * p, "gpu%d power from energy %.0f mW, set %d" % (i, de / dt, p))
calls = open(sys.argv[1].replace(".jsonl", ".calls")).read().split("\n")
check("nvmlDeviceGetComputeRunningProcesses_v3 7" in calls, "INSUFFICIENT_SIZE never met")
check(calls.count("nvmlInit_v2 0") == 1 and not [c for c in calls if "Shutdown" in c],
      "NVML initialised once per process, reused on reopen, never shut down: %s" % calls[:3])
check(not [l for l in LOG if "NVML" in l], "log: %s" % LOG)
PY

# ---- 3. process listing refused (a container, MIG): procs_listed false, no run_mem_mib
run noperm PERFSCOPE_POWERCAP_ROOT="$W/nothing" PERFSCOPE_NVML="$W/fake_nvml.so" FAKE_NVML_GPUS=2 \
  FAKE_NVML_PROCS="$CHILD:536870912" FAKE_NVML_PROCS_ERR=4 -- "pids:$CHILD" open read read close
check_reads noperm <<'PY'
check(len(R) == 2, "2 reads")
for r in R:
    for g in r["gpus"]:
        check(g.get("procs_listed") is False and "run_mem_mib" not in g and "mem_used_mib" in g
              and "energy_mj" in g, "fallback %s" % g)
    check(len(r["gpus"]) == 2, "gpus %s" % r["gpus"])
n = lines("Insufficient Permissions")
check(len(n) == 2 and "GPU 0" in n[0] and "GPU 1" in n[1], "logged once per GPU: %s" % n)
PY

# NVML lists our pid without its memory (NVML_VALUE_NOT_AVAILABLE): the sum is not trusted
run procmemna PERFSCOPE_POWERCAP_ROOT="$W/nothing" PERFSCOPE_NVML="$W/fake_nvml.so" \
  FAKE_NVML_PROCS="$CHILD:18446744073709551615,4242:1048576" -- "pids:$CHILD" open read read close
check_reads procmemna <<'PY'
check(len(R) == 2 and all(g.get("procs_listed") is False and "run_mem_mib" not in g
                          for r in R for g in r["gpus"]) and len(R[0]["gpus"]) == 1, "%s" % R)
check(len(lines("usedGpuMemory")) == 1 and len(LOG) == 2, "logged once: %s" % LOG)
PY

# ---- 3b. inside a container NVML lists host pids: container.pids (kept by perfscope on the host
# from NSpid, docs/containers.md) maps the run's pids; a pid it does not name stays itself
rm -f "$W/container.pids"
run hostpids PERFSCOPE_POWERCAP_ROOT="$W/nothing" PERFSCOPE_NVML="$W/fake_nvml.so" \
  FAKE_NVML_PROCS="77001:1073741824,$CHILD:536870912,4321:8589934592" -- "pids:$CHILD,4321" open read \
  "write:$W/container.pids=4321 77001
garbage line
9 x" read close
rm -f "$W/container.pids"
check_reads hostpids <<'PY'
check(len(R) == 2 and all(len(r["gpus"]) == 1 for r in R), "%s" % R)
if len(R) == 2 and all(len(r["gpus"]) == 1 for r in R):
    check(R[0]["gpus"][0].get("run_mem_mib") == 8704, "before the map, pids are themselves: %s" % R[0])
    check(R[1]["gpus"][0].get("run_mem_mib") == 1536, "4321 is host pid 77001 (1024) + child 512: %s" % R[1])
PY

# ---- 4. no energy: a library without the symbol, a device that says not supported
run noenergy PERFSCOPE_NVML="$W/fake_nvml_noenergy.so" PERFSCOPE_POWERCAP_ROOT="$W/nothing" \
  FAKE_NVML_GPUS=1 -- pids:self open read read close
check_reads noenergy <<'PY'
check(all("energy_mj" not in g and g.get("power_mw") == 100000 for r in R for g in r["gpus"])
      and len(R) == 2 and len(R[0]["gpus"]) == 1, "no energy_mj: %s" % R)
check(len(lines("nvmlDeviceGetTotalEnergyConsumption")) == 1, "missing symbol logged once: %s" % LOG)
PY
run energyerr PERFSCOPE_NVML="$W/fake_nvml.so" PERFSCOPE_POWERCAP_ROOT="$W/nothing" \
  FAKE_NVML_ENERGY_ERR=3 -- pids:self open read read close
check_reads energyerr <<'PY'
check(len(R) == 2 and all("energy_mj" not in g and "power_mw" in g for r in R for g in r["gpus"])
      and len(R[0]["gpus"]) == 1, "no energy_mj: %s" % R)
check(len(lines("Not Supported")) == 1, "logged once: %s" % LOG)
PY
run initerr PERFSCOPE_NVML="$W/fake_nvml.so" PERFSCOPE_POWERCAP_ROOT="$W/nothing" \
  FAKE_NVML_INIT_ERR=9 -- pids:self open read close open read
check_reads initerr <<'PY'
check(len(R) == 2 and all(r["gpus"] == [] for r in R), "gpus %s" % R)
check(len(lines("Driver Not Loaded")) == 1, "init failure logged once: %s" % LOG)
PY

# ---- 5. RssAnon from /proc/<pid>/status, summed over the pids given (each once)
run mem PERFSCOPE_POWERCAP_ROOT="$W/nothing" PERFSCOPE_NVML="" -- \
  "pids:self,$CHILD,$CHILD,2147483647,$ZOMBIE" alloc:64 read pids:2147483647 read pids: read nullobj \
  open read close
check_reads mem "$CHILD" <<'PY'
child = ARGS[0]
check(len(R) == 4, "4 reads")
r = R[0]; by = r["rss_anon_by_pid"]; me = str(r["self_pid"])
check(sorted(by) == sorted([me, child]), "pids read %s" % by)
check(by.get(me, 0) >= 64 * 1024, "self RssAnon %s KiB after touching 64 MiB" % by.get(me))
check(by.get(child) == rss(child), "child RssAnon %s, /proc says %s" % (by.get(child), rss(child)))
check(r.get("rss_anon_kib") == sum(by.values()), "sum %s of %s" % (r.get("rss_anon_kib"), by))
check("rss_anon_kib" not in R[1] and R[1]["rss_anon_by_pid"] == {}, "gone pid only: %s" % R[1])
check(R[2].get("rss_anon_kib") == 0 and R[2]["rss_anon_by_pid"] == {}, "no pids: %s" % R[2])
check(R[3]["gpus"] == [] and R[3]["rapl"] == [], "PERFSCOPE_NVML empty: %s" % R[3])
check(not lines("/proc/"), "a gone pid or a zombie is not an error: %s" % LOG)
PY

# ---- 6. reads before open (or after close) still give every key, empty
run unopened PERFSCOPE_POWERCAP_ROOT="$PC" PERFSCOPE_NVML="$W/fake_nvml.so" -- pids:self read
check_reads unopened <<'PY'
check(len(R) == 1 and R[0]["rapl"] == [] and R[0]["gpus"] == [] and "rss_anon_kib" in R[0], "%s" % R)
PY

checks_done
