"""gpu_nvml_check.py: the shim's NVML readings of a run on a real NVIDIA GPU against what the
tools outside the shim saw at the same boundaries (t_gpu_nvml.sh; python3, standard library only;
checks as tests/checks.py).

    gpu_nvml_check.py OUT ENGINE_JSONL SIDE_PID SIDE_MIB MIB CHILD_MIB

OUT is the run folder of `perfscope record -- gpu_engine run MIB CHILD_MIB ...`; ENGINE_JSONL the
engine's stdout: per boundary, its t, GPU 0's energy counter read through NVML just before the
marker, and nvidia-smi's compute processes and device memory (tests/targets/gpu_engine.c).
SIDE_PID holds SIDE_MIB on the GPU from outside the run for the whole of it. Checked:
  1. every boundary is in phases.jsonl at the engine's t, with GPU 0's readings, processes listed;
  2. the run's GPU memory at each boundary is nvidia-smi's used_memory summed over the engine
     and its child (to 1 MiB): 0 before CUDA, at least MIB + CHILD_MIB when loaded, never the
     process outside the run, which nvidia-smi and the device memory do show;
  3. device memory used moves as nvidia-smi's memory.used does (to 16 MiB; the offset between
     the two is printed: NVML's v1 memory info counts reserved memory as used);
  4. the energy counter read at each boundary is the engine's reading plus at most the energy of
     the time the leader took to read the line (0.2 s at that boundary's power, 2 J at least);
     it moves during the work phase, whose mean power is over 1.1 times the idle phase's;
  5. counters.jsonl: GPU 0's energy never goes back; how often it moved is printed; meta.json's
     counter_reads counts every reading and NVML's CPU (its cost a read is printed);
  6. run.json: memory from the run's processes, baseline 0, peak the loaded run's memory (to
     64 MiB above, for what CUDA adds while it runs); the work phase's GPU energy is the counter
     step between its boundaries; J/token present.
"""
import json
import os
import sys

from checks import check, finish, require
from shimlib import info, load_json_lines as lines

OUT, ENGINE = sys.argv[1], sys.argv[2]
SIDE_PID, SIDE_MIB, MIB, CHILD_MIB = (int(x) for x in sys.argv[3:7])


def apps(text):
    """nvidia-smi --query-compute-apps=pid,used_memory (csv, noheader, nounits): {pid: MiB}."""
    got = {}
    for row in text.splitlines():
        parts = [p.strip() for p in row.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            got[int(parts[0])] = got.get(int(parts[0]), 0) + int(parts[1])
    return got


def gpu0(counters):
    for g in (counters or {}).get("gpus", []):
        if g.get("index") == 0:
            return g
    return None


engine = lines(ENGINE)
phases = lines(os.path.join(OUT, "phases.jsonl"))
require(len(engine) == 8, "the engine wrote 8 boundaries (got %d)" % len(engine))
require(len(phases) == len(engine),
        "phases.jsonl holds the engine's %d boundaries (got %d)" % (len(engine), len(phases)))
log = os.path.join(OUT, "perfscope.log")
if os.path.exists(log):
    with open(log) as f:
        for row in f:
            info("perfscope.log: " + row.rstrip())

# 1-4, boundary by boundary
rows = []
for e, p in zip(engine, phases):
    what = "%s %s" % (e["name"], e["event"])
    check((p.get("name"), p.get("event")) == (e["name"], e["event"]),
          "%s: phases.jsonl has %s %s there" % (what, p.get("name"), p.get("event")))
    check(p.get("t_ns") == e["t_ns"] and p.get("t_from") == "marker",
          "%s: the boundary is at the marker's t (%s, %s)" % (what, p.get("t_ns"), p.get("t_from")))
    g = gpu0(p.get("counters"))
    if not check(g is not None, "%s: GPU 0's readings at the boundary" % what):
        continue
    for k in ("energy_mj", "power_mw", "mem_used_mib", "run_mem_mib"):
        check(isinstance(g.get(k), (int, float)), "%s: GPU 0 has %s" % (what, k))
    check(g.get("procs_listed") is True, "%s: NVML listed the processes" % what)
    a = apps(e["apps"])
    ours = [pid for pid in (e["pid"], e["child_pid"]) if pid]
    want = sum(a.get(pid, 0) for pid in ours)
    got = g.get("run_mem_mib", -1)
    info("%-10s run memory: shim %.1f MiB, nvidia-smi %d MiB (pids %s); all processes %s"
         % (what, got, want, ours, a))
    check(abs(got - want) <= 1.0,
          "%s: the run's GPU memory is nvidia-smi's for the run's pids (%.1f vs %d MiB)"
          % (what, got, want))
    check(a.get(SIDE_PID, 0) >= SIDE_MIB,
          "%s: nvidia-smi shows the process outside the run (%d MiB)" % (what, a.get(SIDE_PID, 0)))
    used, _total = (int(x) for x in e["mem_used"].split(","))
    rows.append({"what": what, "e": e, "g": g, "want": want, "smi_used": used})

require(len(rows) == 8, "every boundary has GPU 0's readings")
first_idle, load_end, last_idle = rows[0], rows[3], rows[7]
check(first_idle["g"]["run_mem_mib"] == 0,
      "before CUDA the run holds no GPU memory (%.1f MiB)" % first_idle["g"]["run_mem_mib"])
check(load_end["g"]["run_mem_mib"] >= MIB + CHILD_MIB,
      "loaded, the run holds at least its %d + %d MiB (%.1f)"
      % (MIB, CHILD_MIB, load_end["g"]["run_mem_mib"]))
check(first_idle["g"]["mem_used_mib"] >= SIDE_MIB,
      "device memory used counts the process outside the run (%.1f MiB)"
      % first_idle["g"]["mem_used_mib"])
for r in rows:
    info("%-10s device memory used: shim %.1f MiB, nvidia-smi %d MiB (offset %.1f)"
         % (r["what"], r["g"]["mem_used_mib"], r["smi_used"], r["g"]["mem_used_mib"] - r["smi_used"]))
d_shim = load_end["g"]["mem_used_mib"] - first_idle["g"]["mem_used_mib"]
d_smi = load_end["smi_used"] - first_idle["smi_used"]
check(abs(d_shim - d_smi) <= 16,
      "device memory used rose as nvidia-smi's did from idle to loaded (%.1f vs %d MiB)"
      % (d_shim, d_smi))

for r in rows:
    lag = r["g"]["energy_mj"] - r["e"]["energy_mj"]
    allowed = max(2000.0, r["g"]["power_mw"] * 0.2)          # mJ: 0.2 s at the boundary's power
    info("%-10s energy: engine %d mJ, shim %d mJ (+%d mJ), power %.1f W"
         % (r["what"], r["e"]["energy_mj"], r["g"]["energy_mj"], lag, r["g"]["power_mw"] / 1000))
    check(0 <= lag <= allowed,
          "%s: the shim's energy reading is the engine's plus at most %.0f mJ (+%d)"
          % (r["what"], allowed, lag))


def mean_w(b, e):
    return (e["g"]["energy_mj"] - b["g"]["energy_mj"]) / ((e["e"]["t_ns"] - b["e"]["t_ns"]) / 1e6)


work_b, work_e = rows[4], rows[5]
work_j = (work_e["g"]["energy_mj"] - work_b["g"]["energy_mj"]) / 1000
engine_j = (work_e["e"]["energy_mj"] - work_b["e"]["energy_mj"]) / 1000
check(work_j > 0, "the energy counter moved during the work phase (%.1f J)" % work_j)
w_work, w_idle = mean_w(work_b, work_e), mean_w(rows[6], last_idle)
info("work: %.1f J by the shim's boundaries, %.1f J by the engine's; mean %.1f W, idle %.1f W"
     % (work_j, engine_j, w_work, w_idle))
check(w_work > 1.1 * w_idle,
      "the work phase's mean power is over 1.1 times the idle phase's (%.1f vs %.1f W)"
      % (w_work, w_idle))

# 5. the periodic readings
series = [(c["t_ns"], gpu0(c)) for c in lines(os.path.join(OUT, "counters.jsonl"))]
series = [(t, g["energy_mj"]) for t, g in series if g and "energy_mj" in g]
require(len(series) >= 10, "counters.jsonl holds GPU 0's energy (%d readings)" % len(series))
check(all(b[1] >= a[1] for a, b in zip(series, series[1:])),
      "GPU 0's energy counter never goes back in counters.jsonl")
moves = sum(1 for a, b in zip(series, series[1:]) if b[1] != a[1])
span = (series[-1][0] - series[0][0]) / 1e9
info("counters.jsonl: %d readings over %.1f s, the energy counter moved between %d of them"
     % (len(series), span, moves))

with open(os.path.join(OUT, "meta.json")) as f:
    meta = json.load(f)
cost = meta.get("counter_reads", {})
reads = cost.get("reads", 0)
check(reads >= len(series) and cost.get("nvml_cpu_s", 0) > 0,
      "meta.json counter_reads: %s reads (%d lines), NVML's CPU counted" % (reads, len(series)))
info("counter reads: %s, CPU a read: RAPL %.3f ms, NVML %.3f ms, memory %.3f ms; the shim's "
     "threads %.3f CPU s in all" % (reads, *(1e3 * cost.get(k, 0) / max(reads, 1) for k in
                                             ("rapl_cpu_s", "nvml_cpu_s", "memory_cpu_s")),
                                    meta.get("sampling", {}).get("shim_threads_cpu_s", -1)))

# 6. the report
with open(os.path.join(OUT, "run.json")) as f:
    run = json.load(f)
mem = run.get("memory", {}).get("gpu", {})
info("run.json memory.gpu: %s" % json.dumps(mem))
check(mem.get("source") == "the run's processes (NVML usedGpuMemory)",
      "run.json: GPU memory from the run's processes (%s)" % mem.get("source"))
check(mem.get("baseline_total_mib") == 0, "run.json: baseline 0 (%s)" % mem.get("baseline_total_mib"))
peak = mem.get("peak_above_baseline_total_mib", -1)
check(load_end["want"] - 1 <= peak <= load_end["want"] + 64,
      "run.json: peak %.1f MiB is the loaded run's %d MiB (to 64 MiB above)"
      % (peak, load_end["want"]))
work = run.get("groups", {}).get("work", {}).get("energy", {})
gj = work.get("domains", {}).get("GPU 0", {}).get("j")
check(gj is not None and abs(gj - work_j) <= 0.001 * work_j + 0.01,
      "run.json: the work phase's GPU 0 energy is the counter step (%s vs %.3f J)" % (gj, work_j))
check(isinstance(run.get("energy", {}).get("work_j_per_token"), (int, float)),
      "run.json: energy.work_j_per_token")
info("run.json groups.work.energy: %s" % json.dumps(work))
finish()
