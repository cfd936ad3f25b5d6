"""report_energy.py: `perfscope-report OUT` on runs whose counters are known exactly, run by
tests/t_tools_report_energy.sh from a scratch folder with $TOOLS/perfscope-report (the sanitizer
build under make test-asan) and the shim ($SHIM, always the normal build) (python3, standard
library only; checks as tests/checks.py: one FAIL line per failed check, the count at the end).

A fake RAPL driver (a thread here) keeps a powercap tree's energy_uj files at the energy of a
known power schedule, rewritten every 10 ms; the target, a Python script under the shim, sets
the power level 20 ms before each marker time (so the driver never has to go back), and writes
its markers with t=. The fake NVML (tests/fixtures/fake_nvml.c) adds two GPUs at a constant
power and per-process memory the target moves through FAKE_NVML_STATE. Checked:
  1. J per domain and J/token within 2% of power x wall, through counter wraparounds; core,
     psys and a dead package never added; an unreadable zone reported unavailable, never 0 J;
     throughput from tokens=; GPU and host memory peaks above the baseline; the marginal energy
     and its ratio over the idle brackets against this file's own computation from counters.jsonl;
  2. a run killed with SIGKILL is `killed`, its open phase runs to the last reading, a phase too
     short for NVML's 100 ms counter is flagged, CPU time and cores from the samples;
  3. a run with no counter at all: energy unavailable, no J/token key, no 0 J anywhere;
  4. an NVML whose energy read costs 3 ms of CPU: meta.json's counter_reads and the report's
     own-threads line give that cost a read.
"""
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import shimlib
from checks import check, finish, require
from shimlib import info

TOOL = sys.argv[1]
FAKE_NVML = sys.argv[2]
W = os.getcwd()
PY = os.path.realpath(sys.executable)

# ---------------------------------------------------------------- the fake RAPL driver

LEVELS = {  # watts per zone at each level
    "package-0": {"idle": 5.0, "busy": 12.0, "mid": 9.0, "light": 5.6},
    "core": {"idle": 2.0, "busy": 8.0, "mid": 6.0, "light": 2.2},
    "dram": {"idle": 1.0, "busy": 3.0, "mid": 2.0, "light": 1.1},
}
WRAP_UJ = 8_000_000  # package-0 wraps every 0.67 s at 12 W


class FakeRapl(threading.Thread):
    """energy_uj of each zone = the integral of its power schedule, rewritten every 10 ms."""

    def __init__(self, root, ctl):
        super().__init__(daemon=True)
        self.root, self.ctl = root, ctl
        self.t0 = time.monotonic_ns()
        self.schedule = [(self.t0, "idle")]
        self.zones = {}
        self.stopped = False
        self.ctl_pos = 0

    def zone(self, rel, name, start_uj, wrap):
        d = os.path.join(self.root, rel)
        os.makedirs(d)
        with open(os.path.join(d, "name"), "w") as f:
            f.write(name + "\n")
        with open(os.path.join(d, "max_energy_range_uj"), "w") as f:
            f.write("%d\n" % wrap)
        self.zones[d] = (name, start_uj, wrap)
        self.write(d, start_uj)

    @staticmethod
    def write(d, uj):
        tmp = os.path.join(d, ".energy_uj.tmp")
        with open(tmp, "w") as f:
            f.write("%d\n" % uj)
        os.replace(tmp, os.path.join(d, "energy_uj"))

    def joules(self, name, t):
        """Energy of zone `name` from t0 to t under the schedule."""
        e = 0.0
        for i, (ts, level) in enumerate(self.schedule):
            end = self.schedule[i + 1][0] if i + 1 < len(self.schedule) else t
            a, b = max(ts, self.t0), min(end, t)
            if b > a:
                e += LEVELS[name][level] * (b - a) / 1e9
        return e

    def read_ctl(self):
        try:
            with open(self.ctl) as f:
                f.seek(self.ctl_pos)
                data = f.read()
        except FileNotFoundError:
            return
        whole = data[:data.rfind("\n") + 1]
        self.ctl_pos += len(whole.encode())
        for line in whole.splitlines():
            t, level = line.split()
            self.schedule.append((int(t), level))

    def run(self):
        while not self.stopped:
            self.read_ctl()
            now = time.monotonic_ns()
            for d, (name, start, wrap) in self.zones.items():
                self.write(d, int(start + self.joules(name, now) * 1e6) % wrap)
            time.sleep(0.01)


def powercap(root, ctl):
    drv = FakeRapl(root, ctl)
    drv.zone("intel-rapl:0", "package-0", 7_000_000, WRAP_UJ)
    drv.zone("intel-rapl:0/intel-rapl:0:0", "core", 100, 262143328850)
    drv.zone("intel-rapl:0/intel-rapl:0:1", "dram", 5_000_000, 65712999613)
    # a second package whose counter never moves: dead, never added
    d = os.path.join(root, "intel-rapl:1")
    os.makedirs(d)
    for k, v in (("name", "package-1"), ("energy_uj", "123456"), ("max_energy_range_uj", "262143328850")):
        with open(os.path.join(d, k), "w") as f:
            f.write(v + "\n")
    # psys whose counter cannot be read (EISDIR, as root cannot be refused by mode bits)
    d = os.path.join(root, "intel-rapl:2")
    os.makedirs(os.path.join(d, "energy_uj"))
    with open(os.path.join(d, "name"), "w") as f:
        f.write("psys\n")
    return drv


# ---------------------------------------------------------------- the target

TARGET = r'''
import os, sys, time
markers, ctl, state = os.environ["LLMPERFSCOPE_MARKERS"], sys.argv[1], sys.argv[2]
plan = [(p.split(":")[0], p.split(":")[1], float(p.split(":")[2]), p.split(":")[3]) for p in sys.argv[3:]]
def put(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")
def gpu(mib0, mib1):
    with open(state + ".tmp", "w") as f:
        f.write("procs_0=%d:%d\nprocs_1=%d:%d\nmem_used_mib=%d,%d\n"
                % (os.getpid(), mib0 << 20, os.getpid(), mib1 << 20, 4000 + mib0, 2000 + mib1))
    os.replace(state + ".tmp", state)
def until(t):
    while time.monotonic_ns() < t:
        time.sleep(max(0, (t - time.monotonic_ns()) / 1e9))
# The baseline is the leader's first reading: the GPU memory appears only after it, however late
# a loaded machine runs the leader's thread.
first = os.path.join(os.environ["PERFSCOPE_OUT"], "counters.jsonl")
deadline = time.monotonic() + 20
while time.monotonic() < deadline and not (os.path.exists(first) and os.path.getsize(first) > 0):
    time.sleep(0.01)
gpu(1024, 512)
time.sleep(0.3)
t = time.monotonic_ns() + 50_000_000
hold = None
for name, level, secs, extra in plan:
    t_end = t + int(secs * 1e9)
    put(ctl, "%d %s\n%d idle" % (t, level, t_end))
    until(t)
    put(markers, "%s begin t=%d" % (name, t))
    if name == "decode":
        gpu(3072, 512)
        hold = bytearray(96 << 20)
        for i in range(0, len(hold), 4096):
            hold[i] = 1
    if extra == "burn":
        end, c0 = time.monotonic() + secs, time.process_time()
        while time.monotonic() < end:
            pass
        with open(state + ".burn", "w") as f:
            f.write("%.6f" % (time.process_time() - c0))
    if extra == "kill":
        time.sleep(secs)
        os.kill(os.getpid(), 9)
    until(t_end)
    put(markers, "%s end t=%d%s" % (name, t_end, (" tokens=" + extra) if extra.isdigit() else ""))
    if name == "decode":
        hold = None
        gpu(1024, 512)
    t = t_end + 50_000_000
time.sleep(0.15)
'''


def run_target(out, plan, env_extra, timeout=60):
    os.makedirs(out)
    with open("target.py", "w") as f:
        f.write(TARGET)
    shim = {k: v for k, v in env_extra.items() if not k.startswith("FAKE_")}
    env = shimlib.shim_env(out, LLMPERFSCOPE_MARKERS=os.path.join(out, "markers"), **shim)
    env.update({k: str(v) for k, v in env_extra.items() if k.startswith("FAKE_")})
    argv = [PY, "target.py", os.path.join(W, "ctl"), os.path.join(out, "nvml.state")] + \
        ["%s:%s:%s:%s" % p for p in plan]
    return shimlib.run(argv, env, timeout=timeout, what="target")


def report(out):
    p = subprocess.run([TOOL, out], capture_output=True, text=True, timeout=120)
    require(p.returncode == 0, "report %s: exit %d: %s" % (out, p.returncode, p.stderr.strip()))
    with open(os.path.join(out, "run.json")) as f:
        run = json.load(f)
    with open(os.path.join(out, "report.md")) as f:
        check(f.read() == p.stdout, "report.md holds what was printed")
    return run, p.stdout


def close(got, want, rel, what):
    ok = got is not None and abs(got - want) <= rel * abs(want)
    check(ok, "%s: %s, want %.4f within %.0f%%" % (what, got, want, rel * 100))
    if ok:
        info("%s: %.4f, want %.4f (%+.2f%%)" % (what, got, want, 100 * (got - want) / want))
    return ok


def phases_of(out):
    """{name: [(begin_ns, end_ns, tokens)]} from phases.jsonl."""
    rows = [json.loads(l) for l in open(os.path.join(out, "phases.jsonl")) if l.strip()]
    open_, done = {}, {}
    for r in sorted(rows, key=lambda r: r["t_ns"]):
        if r["event"] == "begin":
            open_.setdefault(r["name"], []).append(r["t_ns"])
        else:
            done.setdefault(r["name"], []).append((open_[r["name"]].pop(), r["t_ns"], r.get("tokens")))
    return done


# ---------------------------------------------------------------- this file's own energy method

def readings(out):
    """Periodic readings: [(t_ns, {domain: cumulative J})] for package-0, dram and the GPUs."""
    rows = [json.loads(l) for l in open(os.path.join(out, "counters.jsonl")) if l.strip()]
    prev, cum, res = {}, {}, []
    for r in rows:
        vals = {}
        for z in r["rapl"]:
            if z.get("name") in ("package-0", "dram") and "energy_uj" in z:
                vals[z["name"]] = (z["energy_uj"], z.get("max_energy_range_uj"), 1e-6)
        for g in r["gpus"]:
            if "energy_mj" in g:
                vals["gpu%d" % g["index"]] = (g["energy_mj"], None, 1e-3)
        for k, (v, wrap, unit) in vals.items():
            if k in prev:
                d = v - prev[k]
                if d < 0 and wrap:
                    d += wrap
                cum[k] = cum.get(k, 0.0) + d * unit
            else:
                cum[k] = 0.0
            prev[k] = v
        res.append((r["t_ns"], dict(cum)))
    return res


def idle_stats(rd, t0, t1):
    inside = [(t, sum(c.values())) for t, c in rd if t0 <= t <= t1]
    p = [(b[1] - a[1]) / ((b[0] - a[0]) / 1e9) for a, b in zip(inside, inside[1:])]
    return statistics.mean(p), statistics.stdev(p)


def verdict(ratio):
    return "clean" if ratio >= 10 else "relative-only" if ratio >= 3 else "noisy" if ratio >= 1 else "unusable"


# ---------------------------------------------------------------- 1. the full run

def test_full(attempt=1):
    full = os.path.join(W, "full" if attempt == 1 else "full%d" % attempt)
    root = os.path.join(W, "powercap" if attempt == 1 else "powercap%d" % attempt)
    if attempt > 1:
        os.unlink(os.path.join(W, "ctl"))  # the stopped driver's schedule
    drv = powercap(root, os.path.join(W, "ctl"))
    drv.start()
    # 2 s phases: the boundary's counters are read when the leader reads the marker line, a few
    # ms after its t= on a loaded machine; 2% of 2 s leaves 40 ms for that.
    plan = [("idle", "idle", 1.5, "-"), ("prefill", "busy", 2.0, "600"), ("decode", "mid", 2.0, "150"),
            ("light", "light", 2.0, "40"), ("idle", "idle", 1.5, "-")]
    env = dict(HZ=0, POWERCAP_ROOT=root, NVML=FAKE_NVML, FAKE_NVML_GPUS=2,
               FAKE_NVML_POWER_MW="30000,10000", FAKE_NVML_STATE=os.path.join(full, "nvml.state"))
    res = run_target(full, plan, env)
    drv.stopped = True
    shimlib.expect_ok(res, "full run")
    run, text = report(full)
    ph = phases_of(full)
    # The fake driver is a thread of this script that rewrites energy_uj every 10 ms: held back
    # by the machine for 100 ms or more, its idle readings step unevenly although the idle power
    # it plays is constant (an idle spread of about 0.04 W when it keeps time, 13 W when it did
    # not, once in a loaded run). That is the fixture failing, not the report: once, run again.
    rd = readings(full)
    spread = max(idle_stats(rd, *i[:2])[1] for i in sorted(ph["idle"]))
    if spread > 1.0 and attempt == 1:
        info("the fake RAPL driver fell behind (idle spread %.2f W where 0 was played): the run "
             "again" % spread)
        return test_full(attempt + 1)
    check(run["status"] == "ok" and run["perturbed"] is False, "status ok, not perturbed: %s %s"
          % (run["status"], run["perturbed"]))
    watts = {"prefill": (12.0, 3.0), "decode": (9.0, 2.0), "light": (5.6, 1.1)}
    tokens = {"prefill": 600, "decode": 150, "light": 40}
    worst = 0.0
    for g, (pkg, dram) in watts.items():
        (b, e, _), = ph[g]
        wall = (e - b) / 1e9
        grp = run["groups"][g]
        close(grp["wall_s"], wall, 1e-9, "%s wall_s" % g)
        close(run["throughput"][g]["tokens_per_s"], tokens[g] / wall, 1e-6, "%s tokens/s" % g)
        dom = grp["energy"]["domains"]
        for name, w in (("package-0", pkg), ("dram", dram), ("GPU 0", 30.0), ("GPU 1", 10.0)):
            got = dom.get(name, {}).get("j")
            close(got, w * wall, 0.02, "%s %s J" % (g, name))
            if got:
                worst = max(worst, abs(got - w * wall) / (w * wall))
        total = (pkg + dram + 40.0) * wall
        close(grp["energy"]["total"].get("j"), total, 0.02, "%s total J" % g)
        close(run["energy"].get("%s_j_per_token" % g), total / tokens[g], 0.02, "%s J/token" % g)
        check("j" in dom.get("core", {}) and "core" not in run["energy"]["total_over"],
              "%s: core shown, never added: %s" % (g, dom.get("core")))
        close(dom.get("core", {}).get("j"), LEVELS["core"][{"prefill": "busy", "decode": "mid",
                                                            "light": "light"}[g]] * wall, 0.02,
              "%s core J (shown only)" % g)
    info("worst energy error over the domains: %.2f%%" % (100 * worst))
    doms = {d["name"]: d for d in run["energy"]["domains"]}
    check(run["energy"]["total_over"] == ["package-0", "dram", "GPU 0", "GPU 1"],
          "added: %s" % run["energy"]["total_over"])
    check(doms["package-0"].get("wraps", 0) >= 5, "package-0 wrapped %s times" % doms["package-0"].get("wraps"))
    check(doms["package-1"]["state"] == "dead" and not doms["package-1"]["added"],
          "never-moving package is dead: %s" % doms["package-1"])
    check(doms["psys"]["state"] == "unavailable" and "Is a directory" in doms["psys"].get("why", ""),
          "psys unavailable with its reason: %s" % doms["psys"])
    for g in watts:
        d = run["groups"][g]["energy"]["domains"]
        check("j" not in d["psys"] and "unavailable" in d["psys"] and "j" not in d["package-1"],
              "%s: psys/package-1 carry no joules: %s %s" % (g, d["psys"], d["package-1"]))
    check("psys (intel-rapl:2): unavailable: read energy_uj: Is a directory" in text,
          "report names the unreadable zone")
    check("0.000 J" not in text, "no 0 J printed")
    # memory
    gpu = run["memory"]["gpu"]
    check(gpu.get("peak_above_baseline_total_mib") == 3584 and
          gpu.get("peak_above_baseline_max_device_mib") == 3072 and gpu.get("baseline_total_mib") == 0,
          "GPU peaks above baseline: %s" % gpu)
    check(run["groups"]["decode"].get("gpu_peak_above_baseline_total_mib") == 3584 and
          run["groups"]["prefill"].get("gpu_peak_above_baseline_total_mib") == 1536,
          "per-group GPU peaks: %s %s" % (run["groups"]["decode"].get("gpu_peak_above_baseline_total_mib"),
                                          run["groups"]["prefill"].get("gpu_peak_above_baseline_total_mib")))
    host = run["memory"]["host"].get("anon_peak_mib", 0)
    check(96 <= host < 200 and run["groups"]["decode"]["host_anon_peak_mib"] >= 96 and
          run["groups"]["prefill"]["host_anon_peak_mib"] < 96,
          "host anon peak %s, decode %s, prefill %s" % (host, run["groups"]["decode"]["host_anon_peak_mib"],
                                                       run["groups"]["prefill"]["host_anon_peak_mib"]))
    # the marginal energy over the idle brackets, against this file's computation
    idles = sorted(ph["idle"])
    pre, post = idle_stats(rd, *idles[0][:2]), idle_stats(rd, *idles[1][:2])
    idle_w, idle_sd = (pre[0] + post[0]) / 2, max(pre[1], post[1])
    for g in watts:
        (b, e, _), = ph[g]
        wall = (e - b) / 1e9
        t = run["groups"][g]["energy"]["total"]
        want_marg = t["j"] - idle_w * wall
        ratio = (want_marg / wall) / idle_sd
        close(t.get("idle_w"), idle_w, 0.01, "%s idle W" % g)
        close(t.get("marginal_j"), want_marg, 0.03, "%s marginal J" % g)
        close(t.get("ratio"), ratio, 0.03, "%s ratio" % g)
        near = any(abs(ratio - th) < 0.1 * th for th in (1, 3, 10))
        check(near or t.get("verdict") == verdict(ratio), "%s verdict %s, want %s (ratio %.2f)"
              % (g, t.get("verdict"), verdict(ratio), ratio))
        info("%s: marginal %.2f J, ratio %.1f: %s" % (g, t.get("marginal_j", 0), t.get("ratio", 0), t.get("verdict")))
    check(run["groups"]["prefill"]["energy"]["total"].get("verdict") in ("clean", "relative-only"),
          "prefill (+10 W over idle) is clean or relative-only: %s" % run["groups"]["prefill"]["energy"]["total"])
    check(run["energy"].get("prefill_verdict") == run["groups"]["prefill"]["energy"]["total"].get("verdict"),
          "energy.prefill_verdict")
    check("idle phase itself" in json.dumps(run["groups"]["idle"]["energy"]["total"]), "idle has no marginal")


# ---------------------------------------------------------------- 2. killed

def test_killed():
    # decode sleeps 1.2 s, then the target kills itself: a SIGKILLed run keeps all but the last
    # quarter second of its counter lines (one batch, docs/shim.md), and a batch waits for a line
    # read at the counter period: up to 0.35 s lost. With 0.8 s the check below had 0.3 s of
    # margin, and failed on a slower host (decode 0.469-0.477 s, 3 of 3 full-suite runs).
    plan = [("prefill", "busy", 0.3, "burn"), ("decode", "busy", 1.2, "kill")]
    # NVML refuses to list processes (a container): device memory used stands in
    env = dict(HZ=199, POWERCAP_ROOT=os.path.join(W, "nothing"), NVML=FAKE_NVML,
               FAKE_NVML_ENERGY_TICK_MS=100, FAKE_NVML_POWER_MW=50000, FAKE_NVML_GPUS=2,
               FAKE_NVML_PROCS_ERR=4, FAKE_NVML_STATE=os.path.join(W, "killed", "nvml.state"))
    res = run_target(os.path.join(W, "killed"), plan, env)
    check(res.rc == -signal.SIGKILL, "target killed itself: rc %s" % res.rc)
    run, text = report(os.path.join(W, "killed"))
    check(run["status"] == "killed" and "status: killed" in text, "killed run: %s" % run["status"])
    check(run["perturbed"] is True, "sampled run is perturbed")
    dec = run["groups"].get("decode", {})
    check(dec.get("never_ended") == 1 and dec.get("wall_s", 0) > 0.5, "decode never ended: %s" % dec)
    pf = run["groups"]["prefill"]
    flag = pf["energy"]["total"].get("flag", "")
    check("not trusted" in flag and "100 ms" in flag, "0.3 s phase flagged for NVML: %r" % flag)
    with open(os.path.join(W, "killed", "nvml.state.burn")) as f:
        burned = float(f.read())
    cpu = pf.get("cpu_s", -1)
    check(abs(cpu - burned) <= 0.05 + 0.25 * burned,
          "prefill CPU s %s from samples, the target measured %.3f s" % (cpu, burned))
    check(abs(pf.get("cores_busy", -1) - cpu / pf["wall_s"]) < 1e-9, "cores busy = CPU s / wall s")
    info("prefill CPU s %.3f from samples, %.3f measured by the target" % (cpu, burned))
    doms = {d["name"]: d for d in run["energy"]["domains"]}
    check(list(doms) == ["GPU 0", "GPU 1"], "only the GPUs: %s" % list(doms))
    gpu = run["memory"]["gpu"]
    check(gpu.get("baseline_total_mib") == 2048 and gpu.get("peak_above_baseline_total_mib") == 7536
          and gpu.get("peak_above_baseline_max_device_mib") == 6048 and "used" in gpu.get("source", "")
          and not any(d["processes_listed"] for d in gpu["devices"]),
          "device memory used minus its start stands in: %s" % gpu)
    check("NVML could not list the processes" in text, "the report says the fallback")
    check("Hot functions" in text, "hot functions section present")


# ---------------------------------------------------------------- 3. nothing to read

def test_no_counters():
    plan = [("prefill", "busy", 0.2, "100")]
    env = dict(HZ=0, POWERCAP_ROOT=os.path.join(W, "nothing"), NVML=os.path.join(W, "no-nvml.so"))
    res = run_target(os.path.join(W, "bare"), plan, env)
    shimlib.expect_ok(res, "bare run")
    run, text = report(os.path.join(W, "bare"))
    check(not any(k.endswith("_j_per_token") or k.endswith("_j") for k in run["energy"]),
          "no energy numbers: %s" % run["energy"])
    check(run["energy"].get("prefill_unavailable"), "prefill energy says unavailable")
    check("Unavailable: the run recorded no RAPL zone" in text, "report says energy is unavailable")
    check(" 0 J" not in text and "| 0.000 |" not in text.split("## Energy")[0].split("prefill")[1].split("\n")[0],
          "no 0 J in the phase row")
    ph = phases_of(os.path.join(W, "bare"))
    (b, e, _), = ph["prefill"]
    close(run["throughput"]["prefill"]["tokens_per_s"], 100 / ((e - b) / 1e9), 1e-6, "bare tokens/s")
    check("unavailable" in run["memory"]["gpu"], "no GPU memory: %s" % run["memory"]["gpu"])


# ---------------------------------------------------------------- 4. what the reads cost

def test_read_cost():
    """An NVML whose energy read spins 3 ms of CPU, as an H100's does: meta.json's counter_reads
    and the report's own-threads line give it per read, and the shim's threads' CPU holds it; RAPL,
    with no zone here, is said to have none."""
    spin_ms = 3.0
    plan = [("prefill", "idle", 1.0, "100")]
    out = os.path.join(W, "cost")
    env = dict(HZ=199, COUNTER_MS=50, POWERCAP_ROOT=os.path.join(W, "nothing"), NVML=FAKE_NVML,
               FAKE_NVML_ENERGY_CPU_US=int(spin_ms * 1000))
    res = run_target(out, plan, env)
    shimlib.expect_ok(res, "cost run")
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    c = meta.get("counter_reads", {})
    with open(os.path.join(out, "counters.jsonl")) as f:
        lines = sum(1 for x in f if x.strip())
    reads = c.get("reads", 0)
    check(reads >= lines + 2, "counter_reads.reads %s: the %d lines and the 2 boundaries at least"
          % (reads, lines))
    per = 1e3 * c.get("nvml_cpu_s", 0) / max(reads, 1)
    check(spin_ms <= per <= spin_ms + 1.0, "NVML's CPU a read is the fake's %.1f ms (%.3f)"
          % (spin_ms, per))
    check(abs(c.get("cpu_s", -1) - c.get("rapl_cpu_s", 0) - c.get("nvml_cpu_s", 0)
              - c.get("memory_cpu_s", 0)) < 1e-6, "counter_reads.cpu_s is its parts' sum: %s" % c)
    own = meta.get("sampling", {}).get("shim_threads_cpu_s", 0)
    check(own >= 0.9 * (lines * spin_ms / 1e3),
          "the shim's threads' CPU %.3f s holds the periodic reads' %d x %.0f ms" % (own, lines, spin_ms))
    _, text = report(out)
    want = "counter reads: %d (every 50 ms, PERFSCOPE_COUNTER_MS, and at each boundary)" % reads
    check(want in text, "the report says: %s" % want)
    line = [x for x in text.splitlines() if "own threads" in x]
    check(", NVML %.3f ms, memory " % per in text.split(want)[-1],
          "the report gives NVML's cost a read, a source it read: %s" % line)
    check("a read took RAPL " in text and "ms (none here), NVML" in text,
          "the report marks RAPL, with no zone here, as no reading: %s" % line)


if __name__ == "__main__":
    for t in (test_full, test_killed, test_no_counters, test_read_cost):
        t()
    finish()
