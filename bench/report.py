"""bench/report.py: summary statistics and bench/RESULTS.md for make bench.

Medians and min-max spreads of paired ratios, never single timings; the reading below the
table is computed from the figures of this run (targets met or missed and by how much, the
cost split into fixed / per-sample / user / sys), so it stays true when the bench is rerun.
"""
import datetime
import gzip
import os
import platform
import statistics

TARGET_YIELD = 0.99
TARGET_OVERHEAD = {199: 0.005, 997: 0.02}
TARGET_COST_FRACTION = 0.25
TARGET_US_997 = 20.0  # target CPU a delivered sample at 997 Hz (issue 9), with yield >= TARGET_YIELD


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def kernel_hz():
    for path in ["/proc/config.gz", "/boot/config-" + platform.release()]:
        try:
            op = gzip.open if path.endswith(".gz") else open
            with op(path, "rt") as f:
                for line in f:
                    if line.startswith("CONFIG_HZ="):
                        return int(line.split("=")[1])
        except OSError:
            pass
    return None


def machine_info():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            paranoid = f.read().strip()
    except OSError:
        paranoid = "?"
    return {"nproc": len(os.sched_getaffinity(0)), "kernel": platform.release(), "cpu": model,
            "loadavg_start": loadavg(), "kernel_hz": kernel_hz(), "paranoid": paranoid,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version()}


def _stat(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else None


def summarize(cfg, pairs):
    ok = [p for p in pairs if not p["error"]]
    row = {"cfg": cfg, "pairs": len(pairs), "ok": len(ok),
           "errors": [p["error"] for p in pairs if p["error"]]}
    row["wall"] = _stat([p["with"]["wall"] / p["without"]["wall"] for p in ok])
    row["cpu"] = _stat([p["with"]["cpu"] / p["without"]["cpu"] for p in ok])
    row["d_cpu"] = _stat([p["with"]["cpu"] - p["without"]["cpu"] for p in ok])
    row["d_user"] = _stat([p["with"]["user"] - p["without"]["user"] for p in ok])
    row["d_sys"] = _stat([p["with"]["sys"] - p["without"]["sys"] for p in ok])
    row["base_cpu"] = _stat([p["without"]["cpu"] for p in ok])
    sm = [p for p in ok if p["samples"] and p["samples"]["distinct"] > 0]
    hz = cfg["hz"]
    row["samples"] = _stat([p["samples"]["distinct"] for p in sm])
    # yield against the profiled run's own CPU (what the profiler was asked to sample; its own
    # overhead included, so a clock that counts the handler's time cannot pass 100%)
    row["yield"] = _stat([p["samples"]["distinct"] / (p["with"]["cpu"] * hz) for p in sm])
    row["yield_base"] = _stat([p["samples"]["distinct"] / (p["without"]["cpu"] * hz) for p in sm])
    row["self_yield"] = _stat([p["samples"]["hz_delivered"] / hz for p in sm
                               if p["samples"].get("hz_delivered")])
    row["cost_us"] = _stat([(p["with"]["cpu"] - p["without"]["cpu"]) / p["samples"]["distinct"]
                            * 1e6 for p in sm])
    row["writer_us"] = _stat([p["samples"]["shim_threads_cpu_s"] / p["samples"]["distinct"] * 1e6 for p in sm
                              if p["samples"].get("shim_threads_cpu_s") is not None])
    row["shim_pct"] = _stat([p["samples"]["shim_threads_cpu_s"] / p["with"]["wall"] for p in sm
                             if p["samples"].get("shim_threads_cpu_s") is not None])
    row["wakeups_s"] = _stat([p["samples"]["shim_threads_wakeups"] / p["with"]["wall"] for p in sm
                              if p["samples"].get("shim_threads_wakeups") is not None])
    row["clocks"] = sorted({p["samples"].get("clock", "") for p in sm if p["samples"].get("clock")})
    row["dropped"] = sum(p["samples"]["dropped"] for p in sm)
    own = [p["samples"]["own_count"] == p["samples"]["distinct"] for p in sm if "own_count" in p["samples"]]
    row["own_match"] = (sum(own), len(own)) if own else None
    return row


def _r(s, pct=False):
    if not s:
        return "-"
    if pct:
        return "%.1f%% [%.1f-%.1f]" % (s[0] * 100, s[1] * 100, s[2] * 100)
    return "%.4f [%.4f-%.4f]" % s


def _us(s):
    return "%.1f [%.1f-%.1f]" % s if s else "-"


def fixed_cost_s(fixed):
    """The fixed cost a run (the HZ=0 row's median extra CPU) that the per-sample figures take
    out: none where it is not above zero, which the pairs' noise alone makes it (subtracting a
    negative one would credit the samples with CPU that no run saved)."""
    return max(fixed["d_cpu"][0], 0.0) if fixed else 0.0


def _find(rows, **kw):
    for r in rows:
        c = r["cfg"]
        if all(c.get(k) == v for k, v in kw.items()) and r["ok"]:
            return r
    return None


def _table(rows):
    out = ["| config | clock used | wall ratio | CPU ratio | yield | us / sample | samples | pairs ok |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        clk = ",".join(r["clocks"]) or "-"
        if r["dropped"]:
            clk += " (%d dropped)" % r["dropped"]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %d/%d |" % (
            r["cfg"]["name"], clk, _r(r["wall"]), _r(r["cpu"]), _r(r["yield"], True),
            _us(r["cost_us"]), "%.0f" % r["samples"][0] if r["samples"] else "-", r["ok"], r["pairs"]))
    return out


def _split(rows, fixed):
    """Where each sampling configuration's cost goes: fixed (HZ=0) vs per sample, user vs sys;
    and the yield seen three ways (profiled run's CPU, unprofiled run's CPU, the shim's meta)."""
    out = ["| config | extra CPU ms | of which sys ms | us / sample beyond the fixed cost | user us / sample "
           "| sys us / sample | shim threads us / sample | shim threads % of a core | shim wakeups / s | yield vs CPU without | meta hz_delivered / asked |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    f = fixed_cost_s(fixed)
    for r in rows:
        if not r["samples"]:
            continue
        n = r["samples"][0]
        out.append("| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %s | %s | %s | %s |" % (
            r["cfg"]["name"], r["d_cpu"][0] * 1e3, r["d_sys"][0] * 1e3,
            "%.1f" % ((r["d_cpu"][0] - f) / n * 1e6) if r["cfg"]["kind"] == "ps" else "-",
            r["d_user"][0] / n * 1e6, r["d_sys"][0] / n * 1e6,
            "%.1f" % r["writer_us"][0] if r.get("writer_us") else "-",
            "%.3f%%" % (r["shim_pct"][0] * 100) if r.get("shim_pct") else "-",
            "%.1f" % r["wakeups_s"][0] if r.get("wakeups_s") else "-",
            "%.1f%%" % (r["yield_base"][0] * 100),
            "%.1f%%" % (r["self_yield"][0] * 100) if r["self_yield"] else "-"))
    return out


def _why(rows, fixed, khz):
    """Measured reasons for the overhead: fixed cost, per-sample cost, user/sys, unwinder, clock."""
    L = []
    f = fixed_cost_s(fixed)
    for hz, clock in ((199, "timer"), (199, "perf"), (997, "perf")):
        r = _find(rows, kind="ps", hz=hz, clock=clock, unwind="libunwind", delivery="ring")
        if not r or not r["samples"]:
            continue
        n, base = r["samples"][0], r["base_cpu"][0]
        lim = TARGET_OVERHEAD[hz]
        L.append("- %d Hz, %s clock, libunwind%s: extra CPU %.1f ms on %.2f s = fixed %.1f ms + %.0f "
                 "samples x %.1f us; user %.1f us / sample (handler, unwind, copy, writer), sys %.1f us / sample "
                 "(timer interrupt, signal delivery and return). The %.1f%% target allows %.1f ms here, "
                 "i.e. %.1f us a sample after the fixed cost (%.1f us if it were zero): the kernel part "
                 "alone is %s the former." % (
                     hz, clock, " (what auto picks)" if (hz <= (khz or 250)) == (clock == "timer") else "",
                     r["d_cpu"][0] * 1e3, base, f * 1e3, n, (r["d_cpu"][0] - f) / n * 1e6,
                     r["d_user"][0] / n * 1e6, r["d_sys"][0] / n * 1e6, lim * 100, lim * base * 1e3,
                     (lim * base - f) / n * 1e6, lim * base / n * 1e6,
                     "above" if r["d_sys"][0] / n > (lim * base - f) / n else "within"))
    for hz, clock in ((997, "perf"), (199, "timer")):
        a = _find(rows, kind="ps", hz=hz, clock=clock, unwind="libunwind", delivery="ring")
        b = _find(rows, kind="ps", hz=hz, clock=clock, unwind="fp", delivery="ring")
        if a and b and a["cost_us"] and b["cost_us"]:
            L.append("- Unwinder, %d Hz %s: libunwind %.1f us vs frame pointers %.1f us a sample "
                     "(40-deep chain; difference %+.1f us)." % (hz, clock, a["cost_us"][0],
                                                                b["cost_us"][0], a["cost_us"][0] - b["cost_us"][0]))
    for unwind in ("libunwind", "fp"):
        a = _find(rows, kind="ps", hz=199, clock="perf", unwind=unwind, delivery="ring")
        b = _find(rows, kind="ps", hz=199, clock="timer", unwind=unwind, delivery="ring")
        if a and b and a["cost_us"] and b["cost_us"]:
            L.append("- Clock, 199 Hz %s: perf %.1f us vs tick timer %.1f us a sample (sys part %.1f vs "
                     "%.1f us)." % (unwind, a["cost_us"][0], b["cost_us"][0],
                                    a["d_sys"][0] / a["samples"][0] * 1e6, b["d_sys"][0] / b["samples"][0] * 1e6))
    t = _find(rows, kind="ps", hz=997, clock="timer", unwind="libunwind")
    if t and t["yield"]:
        L.append("- The tick timer at 997 Hz delivers %.1f%% of the asked samples: it fires only on the "
                 "scheduler tick (CONFIG_HZ), the rest arrive as si_overrun (the record repeated, not new "
                 "samples)." % (t["yield"][0] * 100))
    g = _find(rows, kind="gperf", hz=997)
    if g and g["yield"]:
        L.append("- gperftools at 997 Hz delivers %.1f%%: its process-wide ITIMER_PROF is also tick-bound."
                 % (g["yield"][0] * 100))
    return L


def _verdict(ok):
    return "met" if ok else "MISSED"


def _reading(rows, m):
    L = []
    aa = _find(rows, kind="none")
    fixed = _find(rows, kind="ps", hz=0)
    noise = max(abs(aa["cpu"][1] - 1), abs(aa["cpu"][2] - 1)) if aa else None
    if aa:
        L.append("- Noise floor: the A/A pairs (no profiler on either side) spread CPU ratio %.4f-%.4f "
                 "and wall ratio %.4f-%.4f, so CPU differences under about %.2f%% are not resolved in "
                 "this run. Wall time here depends on whatever else shares the 2 cores, so read the CPU "
                 "ratio; the wall ratio is shown for completeness." % (
                     aa["cpu"][1], aa["cpu"][2], aa["wall"][1], aa["wall"][2], noise * 100))
    if fixed:
        L.append("- Fixed cost (shim loaded, HZ=0: writer, counters every 100 ms, meta, maps): median "
                 "%+.1f ms CPU per run [%+.1f..%+.1f] (CPU ratio %.4f)." % (
                     fixed["d_cpu"][0] * 1e3, fixed["d_cpu"][1] * 1e3, fixed["d_cpu"][2] * 1e3,
                     fixed["cpu"][0]))
        if fixed["d_cpu"][0] <= 0:
            L.append("  Not above zero, which only the pairs' noise can make it: the per-sample figures below "
                     "take out no fixed cost (bench/resolve.py's pairs resolve the whole 199 Hz cost).")
    # deliveries
    dl = [r for r in (_find(rows, kind="ps", hz=997, clock="perf", unwind="libunwind", delivery=d)
                      for d in ("ring", "refresh", "sigtrap")) if r and r["cost_us"]]
    if dl:
        desc = "; ".join("%s %.1f us/sample (range %.1f-%.1f), yield %.1f%%" % (
            r["cfg"]["delivery"], r["cost_us"][0], r["cost_us"][1], r["cost_us"][2],
            r["yield"][0] * 100) for r in dl)
        cheapest = min(dl, key=lambda r: r["cost_us"][0])
        safe = [r for r in dl if r["cfg"]["delivery"] != "sigtrap" and r["yield"][0] >= TARGET_YIELD]
        L.append("- Perf overflow delivery at 997 Hz (perf, libunwind): %s. Cheapest median: %s." %
                 (desc, cheapest["cfg"]["delivery"]))
        L.append("  sigtrap is synchronous (SIGTRAP from the kernel, si_code TRAP_PERF): a debugger "
                 "attached to the target stops at every sample and a target's own SIGTRAP handler "
                 "(or one that expects none) is disturbed, so it is not safe as a default whatever it "
                 "costs. refresh stops the clock between the overflow and the re-arm in the handler "
                 "(its yield above shows what that loses). ring never stops the clock and sends an "
                 "ordinary queued signal.")
        if safe:
            best = min(safe, key=lambda r: r["cost_us"][0])
            L.append("  Recommended: **%s** (cheapest of the safe ones with yield >= 99%%)." %
                     best["cfg"]["delivery"])
        close = [r for r in dl if r is not cheapest and
                 r["cost_us"][1] <= cheapest["cost_us"][2]]
        if close:
            L.append("  The cost ranges of %s overlap the cheapest's: the difference is within this "
                     "run's noise." % ", ".join(r["cfg"]["delivery"] for r in close))
    # targets
    L.append("")
    L.append("Targets (medians; [min-max] over the pairs):")
    for r in rows:
        c = r["cfg"]
        if c.get("hz") == 997 and r["yield"]:
            L.append("- yield >= 99%% at 997 Hz, %s: %.1f%% [%.1f-%.1f] -> %s%s" % (
                c["name"], r["yield"][0] * 100, r["yield"][1] * 100, r["yield"][2] * 100,
                _verdict(r["yield"][0] >= TARGET_YIELD),
                "" if r["yield"][0] >= TARGET_YIELD else " by %.1f points" % ((TARGET_YIELD - r["yield"][0]) * 100)))
    for r in rows:
        c = r["cfg"]
        if c["kind"] == "ps" and c.get("hz") in TARGET_OVERHEAD and r["cpu"]:
            lim = TARGET_OVERHEAD[c["hz"]]
            ov, wov = r["cpu"][0] - 1, r["wall"][0] - 1
            if noise is not None and abs(ov - lim) <= noise:
                v = "not resolved: the target lies within this run's noise floor (%.2f%%) of the figure" % (noise * 100)
            else:
                v = _verdict(ov <= lim) + ("" if ov <= lim else " by %.2f points" % ((ov - lim) * 100))
                if ov <= lim and r["yield"] and r["yield"][0] < TARGET_YIELD:
                    v += ", but only by taking %.1f%% of the asked samples" % (r["yield"][0] * 100)
            L.append("- overhead <= %.1f%% at %d Hz, %s: CPU %+.2f%% [%+.2f..%+.2f], wall %+.2f%% -> %s" % (
                lim * 100, c["hz"], c["name"], ov * 100, (r["cpu"][1] - 1) * 100,
                (r["cpu"][2] - 1) * 100, wov * 100, v))
    for r in rows:
        c = r["cfg"]
        if c["kind"] == "ps" and c.get("hz") == 997 and r["cost_us"] and r["yield"]:
            us, y = r["cost_us"][0], r["yield"][0]
            if us <= 0:
                # a cost that did not show above zero is the pairs' noise: no verdict either way
                v = "not measured: the extra CPU a sample is not above zero in these pairs"
            else:
                v = _verdict(us <= TARGET_US_997 and y >= TARGET_YIELD)
                if us > TARGET_US_997:
                    v += " by %.1f us" % (us - TARGET_US_997)
            if y < TARGET_YIELD:
                v += " (yield %.1f%%)" % (y * 100)
            L.append("- at most %.0f us of target CPU a delivered sample at 997 Hz with yield >= 99%%, %s: "
                     "%.1f us [%.1f-%.1f], yield %.1f%% -> %s" % (
                         TARGET_US_997, c["name"], us, r["cost_us"][1], r["cost_us"][2], y * 100, v))
    L.append("  The floor under these: the section \"Cost per sample, taken apart\" below times the kernel's "
             "part alone (the timer interrupt and the signal's delivery, with a handler that does nothing).")
    for r in [x for x in rows if x["cfg"]["kind"] == "ps" and x["cfg"].get("hz") == 199 and
              x["cfg"].get("clock") == "timer" and x["cfg"].get("unwind") == "libunwind" and x["ok"]]:
        if not r.get("shim_pct"):
            continue
        L.append("- the shim's own threads at 199 Hz with 2 busy threads (what auto picks) at most 0.2%% of one "
                 "core, %s: %.3f%% [%.3f-%.3f] (meta.json shim_threads_cpu_s / wall), %.1f wakeups a "
                 "second -> %s" % (
                     "counter reads off" if r["cfg"].get("env") else "counter reads every 100 ms included",
                     r["shim_pct"][0] * 100, r["shim_pct"][1] * 100, r["shim_pct"][2] * 100,
                     r["wakeups_s"][0] if r.get("wakeups_s") else float("nan"),
                     _verdict(r["shim_pct"][0] <= 0.002)))
    for r in rows:
        c = r["cfg"]
        g = _find(rows, kind="gperf", hz=c.get("hz"))
        if c["kind"] == "ps" and r["cost_us"] and g and g["cost_us"]:
            notes = [who for who, x in (("ours", r), ("gperftools'", g))
                     if noise is not None and abs(x["cpu"][0] - 1) <= noise]
            if g["cost_us"][0] <= 0:
                # no ratio to a cost that did not show: saying MISSED (or met) would be made up
                L.append("- cost/sample <= 1/4 of gperftools' (%.1f us at %d Hz), %s: %.1f us -> not measured: "
                         "gperftools' extra CPU a sample is not above zero in these pairs" % (
                             g["cost_us"][0], c["hz"], c["name"], r["cost_us"][0]))
                continue
            if r["cost_us"][0] <= 0:
                L.append("- cost/sample <= 1/4 of gperftools' (%.1f us at %d Hz), %s: %.1f us -> not measured: "
                         "our extra CPU a sample is not above zero in these pairs" % (
                             g["cost_us"][0], c["hz"], c["name"], r["cost_us"][0]))
                continue
            frac = r["cost_us"][0] / g["cost_us"][0]
            L.append("- cost/sample <= 1/4 of gperftools' (%.1f us at %d Hz), %s: %.1f us = %.2fx -> %s%s" % (
                g["cost_us"][0], c["hz"], c["name"], r["cost_us"][0], frac,
                _verdict(frac <= TARGET_COST_FRACTION),
                " (extra CPU within the noise floor: %s)" % " and ".join(notes) if notes else ""))
    for r in rows:
        if r["cfg"]["kind"] == "gperf" and r.get("own_match"):
            L.append("- Reader check, %s: the profile file's sample count equals gperftools' own "
                     "'PROFILE: interrupts' tally in %d of %d runs." % ((r["cfg"]["name"],) + r["own_match"]))
    for r in rows:
        if r["yield"] and r["yield"][0] > 1.01:
            L.append("- %s: yield above 100%% (%.1f%%): more samples than the run's rusage CPU x rate; "
                     "the count itself is the profiler's (see the reader check), the cause is not "
                     "measured here." % (r["cfg"]["name"], r["yield"][0] * 100))
    if not _find(rows, kind="gperf"):
        L.append("- cost/sample against gperftools: not measured (gperftools not installed).")
    return L


def write(path, rows, m, args):
    fixed = _find(rows, kind="ps", hz=0)
    knobs = ", ".join("%s=%s" % (k, os.environ[k]) for k in sorted(os.environ)
                      if k.startswith("BENCH_") or k == "SYMBOLIZE_N")
    L = ["# perfscope bench results", "",
         "Written by `make bench` (bench/run.sh -> bench/analyze.py for the first tables, then "
         "bench/pool.py, bench/resolve.py, bench/shimthreads.py and bench/symbolize.sh, each for its own "
         "section). Figures, not tests: this machine is shared and noisy, so no figure is a single timing: "
         "the first tables give the median of paired ratios with the [min-max] spread, and each later "
         "section says how its figures are made.", "",
         "## Run", "",
         "- date: %s" % m["date"],
         "- command: `make bench` (= `bench/run.sh`; BENCH_N=%d, BENCH_BUDGET_S=%.0f%s)" % (
             args.n, args.budget, ", BENCH_ITERS=" + args.iters if args.iters else ""),
         "- knobs set in the environment: %s" % (knobs or "none (every section at its defaults)"),
         "- machine: %d CPUs (nproc), CPU model `%s`, kernel %s (CONFIG_HZ=%s), perf_event_paranoid=%s" % (
             m["nproc"], m["cpu"], m["kernel"], m["kernel_hz"] or "?", m["paranoid"]),
         "- load average at start: %s; at end: %s (other engineers' tests may share these cores)" % (
             m["loadavg_start"], m["loadavg_end"]),
         "- repetitions completed: %d pairs per configuration (of %d asked), %.0f s in all" % (
             m["reps"], args.n, m["elapsed_s"]),
         "- target: bench/target.c, 2 threads x fixed iterations at the leaf of a 40-deep noinline "
         "call chain, -O2 -g -fno-omit-frame-pointer; each pair runs it without then with the "
         "profiler; the configuration order rotates each repetition.", "",
         "Definitions: ratio = with / without of the same pair; CPU = user+sys of the child (wait4 "
         "rusage); yield = distinct samples (perfscope: distinct (tid, time_ns); gperftools: sum of "
         "record counts) / (the profiled run's CPU s x asked rate; the same over the unprofiled run's "
         "CPU is in the second table); us / sample = (CPU with - CPU "
         "without) / distinct samples. perfscope runs with its defaults otherwise (counters every "
         "100 ms, max 64 frames).", "",
         "## Results", ""]
    L += _table(rows)
    L += ["", "## Where the cost goes (medians)", ""]
    L += _split([r for r in rows if r["cfg"]["kind"] != "none" and r["cfg"].get("hz")], fixed)
    L += ["", "## Reading", ""]
    L += _reading(rows, m)
    L += ["", "Why (from the figures above, medians):"]
    L += _why(rows, fixed, m["kernel_hz"])
    errs = [(r["cfg"]["name"], e) for r in rows for e in r["errors"]]
    if errs:
        L += ["", "## Failed pairs (left out of the figures)", ""]
        L += ["- %s: %s" % e for e in errs]
    if not _find(rows, kind="gperf"):
        L += ["", "gperftools (libprofiler.so.0) is not installed: that peer was skipped "
              "(`apt-get install google-perftools`)."]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
