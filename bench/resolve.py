"""bench/resolve.py: the defaults' cost at 199 Hz, resolved by many pairs (standard library only).

Run by bench/run.sh after bench/pool.py; writes its own section of bench/RESULTS.md, replacing
its earlier self. It answers what the min-max spreads of the first table and of the thread-pool
table cannot: is the cost at 199 Hz under its target? One pair alone varies by 1.4-3% on this
shared machine, more than either target, so this runs a fixed number of pairs, chosen from that
spread so that the 95% interval's half-width comes out near half the target. Two questions:
- bench/target.c (the first table's work target), CPU (user+sys of the child): at most +0.5%;
- bench/threadpool.c (the thread-pool table's target), throughput: at most 1% loss;
and, with no target, what the pool's figure is made of: the pool with the shim loaded but not
sampling (PERFSCOPE_HZ=0), and with no shim but one idle thread (bench/idlethread.c), so that
sampling's own share is the difference of the first two.
Each pair runs the target without and with the shim at its defaults (PERFSCOPE_HZ=199 only).
Which of the two runs first is drawn beforehand, half each way, shuffled with a fixed seed: an
order effect (the second run finding warm caches or a neighbour's burst) then falls on each side
alike, and the mean of the two order groups' mean log ratios cancels it. It does not cancel the
after-effect of a shim run on the run after it (its files' writeback, its pages): with the shim
first, that lands on its own pair's run without, and the order groups' figure comes out low by
half of it. So the stated figure is a least-squares fit over every pair of a program, in the
order run: one constant per configuration (its cost), the order sign, and two after-effects,
a pair's run without right after its own shim run and a pair's first run after the shim run
that ended the pair before (fit, after_in, after_out); the order groups' figure is shown
beside it. A/A pairs
(no profiler either side, drawn alike) give the spread where there is no cost, and their
constant in the fit should be 0. Nothing stops early on what the pairs
show, which would bias the verdict; a time budget only cuts the run short, and the two
questions take their pairs in proportion so that both keep the same share done.
Figures, never verdicts that fail the bench: exit 0 unless the bench itself could not run.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402
import pool  # noqa: E402
import report  # noqa: E402
from intervals import mean_ci, t975, welch  # noqa: E402

AA_EVERY = 3  # an A/A pair after every this many profiled pairs of a question
SEED = 9      # the orders' shuffle: fixed, so that a run can be repeated pair for pair

PS199 = {"name": "perfscope 199 Hz (defaults)", "kind": "ps", "hz": 199, "env": {}}
HZ0 = {"name": "the shim loaded, sampling off (PERFSCOPE_HZ=0)", "kind": "ps", "hz": 0, "env": {}}
IDLE = {"name": "no shim: one idle thread (bench/idlethread.c preloaded)", "kind": "idle", "hz": 0}
AA = {"name": "A/A (no profiler either side)", "kind": "none", "hz": 0}

# Each question: the program, what runs on the profiled side, the measure read from each run,
# its stated figure and its target (None: no target, a figure that explains another). A pair's
# value is log(with / without) of the measure: CPU seconds for the work target, seconds per step
# for the pool (of its timed steps, after its warm-up: step_s with / step_s without = 1 / the
# throughput ratio, pool.throughput_ratio). The last two
# tell what the pool's figure is made of: timed over the whole run, the pool ran faster with any
# idle thread in its process, the shim's included (its first steps measured where the scheduler
# placed its threads); the timed steps show whether any such effect is left.
QUESTIONS = [
    {"key": "cpu", "title": "bench/target.c", "cfg": PS199, "measure": "cpu", "target_pct": 0.5,
     "figure": "CPU overhead", "target_text": "at most +0.5% CPU", "aa": True},
    {"key": "pool", "title": "bench/threadpool.c", "cfg": PS199, "measure": "step_s", "target_pct": 1.0,
     "figure": "throughput loss", "target_text": "at most 1% throughput loss", "aa": True},
    {"key": "pool_hz0", "title": "bench/threadpool.c", "cfg": HZ0, "measure": "step_s", "target_pct": None,
     "figure": "throughput loss", "target_text": "-", "aa": False},
    {"key": "pool_idle", "title": "bench/threadpool.c", "cfg": IDLE, "measure": "step_s", "target_pct": None,
     "figure": "throughput loss", "target_text": "-", "aa": False},
]


def draw_orders(name, n):
    """-> n with_first flags, drawn beforehand: half each way (the odd one out without first),
    shuffled with SEED and the name, so that a run of the bench can be repeated pair for pair."""
    o = [i % 2 == 1 for i in range(n)]
    random.Random("%s-%d" % (name, SEED)).shuffle(o)
    return o


def run_pair(q, cfg, args, argv, rep, with_first):
    """-> (log of with / without of the question's measure, None), or (None, why not)."""
    if q["measure"] == "cpu":
        p = analyze.one_pair(cfg, args, argv, rep, with_first)
    else:
        p = pool.pool_pair(cfg, args, rep, with_first)
    if p["error"]:
        return None, p["error"]
    a, b = p["with"][q["measure"]], p["without"][q["measure"]]
    if a <= 0 or b <= 0:
        return None, "a run measured no %s" % q["measure"]
    return math.log(a / b), None


def groups(pairs):
    """pairs: [(log ratio, with_first, prev)] -> (the without-first logs, the with-first logs)."""
    return [p[0] for p in pairs if not p[1]], [p[0] for p in pairs if p[1]]


def estimate(pairs):
    """-> (mean log ratio, 95% half-width): the mean of the two order groups' means, so that the
    order effect cancels even where the groups differ in size; the plain mean where a group has
    under 2 pairs. None under 2 pairs."""
    nf, wf = groups(pairs)
    w = welch(nf, wf, +1)
    if w:
        return w[0] / 2, w[1] / 2
    c = mean_ci([p[0] for p in pairs])
    return (c[0], c[1]) if c else None


def order_effect(pairs):
    """-> (how much slower the second run of a pair is, in log terms, and its 95% half-width):
    half the difference of the order groups' means (with second minus with first)."""
    w = welch(*groups(pairs), -1)
    return (w[0] / 2, w[1] / 2) if w else None


def shim_run(cfg):
    """Whether the run on cfg's profiled side is a shim run: one that leaves a run folder behind,
    whose after-effect on the run after it (its files' writeback, its pages) the fit measures."""
    return cfg["kind"] == "ps"


def after_in(wf, with_shim):
    """A pair's covariate for the after-effect of its own shim run on its own run without: -1
    when the with run is a shim run and goes first (the without run then follows it at once,
    its run folder still there), else 0."""
    return -1 if wf and with_shim else 0


def after_out(wf, prev):
    """A pair's covariate for the after-effect of the run before the pair (prev: 1 a shim run,
    0 not) on the pair's first run: +prev when the with side goes first, -prev when the without
    side does. That shim run ended before its own pair's samples were counted and its folder
    removed, so this after-effect is fitted apart from after_in's."""
    return prev if wf else -prev


def inverse(m):
    """-> the inverse of the square matrix m (Gauss-Jordan, partial pivoting); None if singular."""
    k = len(m)
    a = [list(map(float, row)) + [1.0 if i == j else 0.0 for j in range(k)] for i, row in enumerate(m)]
    scale = max(abs(v) for row in m for v in row) or 1.0
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-12 * scale:
            return None
        a[c], a[p] = a[p], a[c]
        d = a[c][c]
        a[c] = [v / d for v in a[c]]
        for r in range(k):
            if r != c and a[r][c]:
                f = a[r][c]
                a[r] = [v - f * w for v, w in zip(a[r], a[c])]
    return [row[k:] for row in a]


def fit(rows):
    """rows: one program's pairs, [(name, log ratio, with_first, prev, with_shim)]. Least squares
    of each pair's log ratio on one constant per name (that configuration's cost), the order sign
    (+1 with second, -1 with first: how much slower a pair's second run is, the same for every
    configuration, so that the A/A pairs pin it), after_in (how much slower a pair's run without
    is right after its own shim run) and after_out (how much slower a pair's first run is after
    the shim run that ended the pair before). The order groups' mean cancels the order effect
    but not these: with the shim first, after_in's falls on its own pair's run without, and the
    figure comes out low by half of it. -> {"names", "beta", "cov", "df"} (the constants in
    names' order, then the order effect, after_in's and after_out's); None where the pairs
    cannot tell them apart. Pairs whose prev is unknown (None) are left out."""
    rows = [r for r in rows if r[3] is not None]
    names = sorted({r[0] for r in rows})
    k = len(names) + 3
    X = [[1.0 if name == n else 0.0 for n in names] +
         [-1.0 if wf else 1.0, float(after_in(wf, ws)), float(after_out(wf, prev))]
         for name, _, wf, prev, ws in rows]
    y = [r[1] for r in rows]
    if len(rows) <= k:
        return None
    inv = inverse([[sum(row[a] * row[b] for row in X) for b in range(k)] for a in range(k)])
    if inv is None:
        return None
    xty = [sum(row[a] * v for row, v in zip(X, y)) for a in range(k)]
    beta = [sum(inv[a][b] * xty[b] for b in range(k)) for a in range(k)]
    df = len(rows) - k
    s2 = sum((v - sum(b * x for b, x in zip(beta, row))) ** 2 for row, v in zip(X, y)) / df
    return {"names": names, "beta": beta, "cov": [[c * s2 for c in row] for row in inv], "df": df}


def fit_term(f, i):
    """-> (estimate, 95% half-width) of the fit's i-th term."""
    return f["beta"][i], t975(f["df"]) * math.sqrt(max(f["cov"][i][i], 0.0))


def program_fits(got, aa):
    """-> {measure: fit} over every pair of each program (its profiled, A/A and extra pairs), the
    constants named by question key ("-aa" for a question's A/A pairs)."""
    rows = {}
    for q in QUESTIONS:
        for name, pairs, cfg in ((q["key"], got.get(q["key"], []), q["cfg"]),
                                 (q["key"] + "-aa", aa.get(q["key"], []), AA)):
            rows.setdefault(q["measure"], []).extend(
                (name, x, wf, prev, shim_run(cfg)) for x, wf, prev in pairs)
    return {m: fit(r) for m, r in rows.items()}


def fitted(q, fits, suffix=""):
    """-> (figure, lo, hi) in %: the question's cost with the order effect and the after-effect
    taken out (bench/resolve.py's stated figure); None where the fit could not be made."""
    f = fits.get(q["measure"])
    if not f or q["key"] + suffix not in f["names"]:
        return None
    m, h = fit_term(f, f["names"].index(q["key"] + suffix))
    return to_pct(q, m), to_pct(q, m - h), to_pct(q, m + h)


ORDER, AFTER_IN, AFTER_OUT = -3, -2, -1  # the fit's last three terms


def fitted_effect(q, fits, which):
    """-> (figure, lo, hi) in %, on the question's measure: the fit's order effect (ORDER) or an
    after-effect (AFTER_IN, AFTER_OUT), as how much more CPU (or time per step) the later run
    takes."""
    f = fits.get(q["measure"])
    if not f:
        return None
    m, h = fit_term(f, len(f["beta"]) + which)
    return tuple((math.exp(v) - 1) * 100 for v in (m, m - h, m + h))


def to_pct(q, x):
    """A mean log ratio as the question states it, in %: CPU overhead (with / without - 1) or
    throughput loss (1 - without / with, the pool's measure being time per step)."""
    return (math.exp(x) - 1) * 100 if q["measure"] == "cpu" else (1 - math.exp(-x)) * 100


def target_log(q):
    """The target on the log ratio's scale."""
    t = q["target_pct"] / 100
    return math.log(1 + t) if q["measure"] == "cpu" else -math.log(1 - t)


def figure(q, pairs):
    """-> (figure, lo, hi) in % as the question states it; None under 2 pairs."""
    e = estimate(pairs)
    if not e:
        return None
    return to_pct(q, e[0]), to_pct(q, e[0] - e[1]), to_pct(q, e[0] + e[1])


def verdict(q, fig):
    if q["target_pct"] is None:
        return "-"
    if fig[2] <= q["target_pct"]:
        return "met"
    if fig[1] > q["target_pct"]:
        return "MISSED"
    return "not resolved"


def fmt_fig(f):
    return "%+.2f%% [%+.2f..%+.2f]" % f if f else "-"


def fmt_order(pairs):
    o = order_effect(pairs)
    return "%+.2f%% [%+.2f..%+.2f]" % (o[0] * 100, (o[0] - o[1]) * 100, (o[0] + o[1]) * 100) if o else "-"


def sd(pairs):
    """One pair's standard deviation around its order group's mean, in % (the spread the
    interval is built from; the order effect is not part of it)."""
    nf, wf = groups(pairs)
    dev = [x - statistics.fmean(g) for g in (nf, wf) if g for x in g]
    return "%.2f%%" % (math.sqrt(sum(d * d for d in dev) / (len(dev) - 2)) * 100) if len(dev) > 2 else "-"


def sampling_share(got, fits=None):
    """-> the pool's throughput loss from sampling alone (199 Hz pairs against sampling-off
    pairs: the difference of their two constants in the pool's fit, or without a fit of the two
    mean log ratios), as (figure, lo, hi) in %; None without both."""
    f = (fits or {}).get("step_s")
    if f and "pool" in f["names"] and "pool_hz0" in f["names"]:
        i, j = f["names"].index("pool"), f["names"].index("pool_hz0")
        m = f["beta"][i] - f["beta"][j]
        h = t975(f["df"]) * math.sqrt(max(f["cov"][i][i] + f["cov"][j][j] - 2 * f["cov"][i][j], 0.0))
    else:
        a, b = estimate(got.get("pool", [])), estimate(got.get("pool_hz0", []))
        if not a or not b:
            return None
        m, h = a[0] - b[0], math.sqrt(a[1] ** 2 + b[1] ** 2)
    q = QUESTIONS[1]
    return to_pct(q, m), to_pct(q, m - h), to_pct(q, m + h)


def section(args, got, aa, tries, want, machine):
    fits = program_fits(got, aa)
    L = ["## The defaults' cost at 199 Hz, resolved (bench/resolve.py)", "",
         "Written by `bench/resolve.py` (run by `make bench` after the thread pool). Pairs without and "
         "with the shim at its defaults (PERFSCOPE_HZ=199 only) on the first table's work target and on the "
         "thread pool, interleaved in proportion; which run of a pair goes first is drawn beforehand, half "
         "each way, shuffled with a fixed seed, so that an order effect falls on both sides alike; an A/A "
         "pair (no profiler either side, drawn alike) after every %d profiled pairs. Pairs fixed beforehand: "
         "%d on the work target, %d on the pool (BENCH_RES_CPU_N, BENCH_RES_POOL_N), and %d each on the pool "
         "with the shim loaded but not sampling and with an idle thread instead of the shim "
         "(BENCH_RES_EXTRA_N), within a time budget of %.0f s (BENCH_RES_BUDGET_S). %.0f s in all; load "
         "average at start %s, at end %s. Every pair, in the order run, is in %s."
         % (AA_EVERY, want["cpu"], want["pool"], want["pool_hz0"], args.budget, machine["elapsed_s"],
            machine["loadavg_start"], machine["loadavg_end"], machine.get("pairs_file", "-")), "",
         "A pair's value is log(with / without) of the measure: CPU = user+sys of the child (wait4); the "
         "pool's time per step, of the timed steps it prints after its warm-up. Two figures, each with its "
         "[95% interval]. Order groups: the mean of the two order groups' means, Welch's t over the groups; "
         "it cancels what going second costs a run, but not the after-effect of a shim run on the run after "
         "it (its files' writeback, its pages): with the shim first, that falls on its own pair's run "
         "without, so this figure comes out low by half of it. Fitted (the stated figure): least squares "
         "over all the pairs of the program (profiled, A/A and extra) of the log ratio on one constant per "
         "configuration, the order sign (the A/A pairs pin it), and two after-effects: a pair's run without "
         "right after its own shim run, and a pair's first run after the shim run that ended the pair before "
         "(each pair's predecessor known from the order run); the interval from the fit's standard error; "
         "the A/A constant should be 0. Pairs whose predecessor is not known (the first, and one after a "
         "failed pair) are left out of the fit. sd = one pair's log ratio around its order group's mean, in %. Second run slower = half the "
         "difference of the order groups' means.", "",
         "| program | against no profiler | figure | pairs ok / tried | order groups [95%] | fitted [95%] "
         "| sd of one pair | second run slower | A/A pairs | A/A fitted [95%] | A/A sd | A/A second run slower "
         "| target | verdict |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for q in QUESTIONS:
        k = q["key"]
        xs, ys = got[k], aa[k]
        fx, ff = figure(q, xs), fitted(q, fits)
        stated = ff or fx
        v = verdict(q, stated) if stated else "-"
        L.append("| %s | %s | %s | %d / %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            q["title"], q["cfg"]["name"], q["figure"], len(xs), tries[k], fmt_fig(fx), fmt_fig(ff), sd(xs),
            fmt_order(xs), "%d" % len(ys) if q["aa"] else "-",
            fmt_fig(fitted(q, fits, "-aa")) if q["aa"] else "-", sd(ys), fmt_order(ys), q["target_text"], v))
        if tries[k] < want[k]:
            notes.append("- %s, %s: the time budget stopped the run after %d of %d pairs."
                         % (q["title"], q["cfg"]["name"], tries[k], want[k]))
        if not stated:
            continue
        how = "fitted" if ff else "order groups (no fit)"
        if q["target_pct"] is None:
            notes.append("- %s, %s: %s %s over %d pairs (%s)." % (q["title"], q["cfg"]["name"], q["figure"],
                                                                fmt_fig(stated), len(xs), how))
            continue
        notes.append("- %s, %s at 199 Hz (defaults): %s over %d pairs (%s) -> %s (target: %s)."
                     % (q["title"], q["figure"], fmt_fig(stated), len(xs), how, v, q["target_text"]))
        if v == "not resolved":
            lo, hi = (math.log(1 + stated[i] / 100) if q["measure"] == "cpu" else -math.log(1 - stated[i] / 100)
                      for i in (1, 2))
            m, h = (lo + hi) / 2, (hi - lo) / 2
            gap = abs(m - target_log(q))
            notes.append("- %s: the interval holds the target; at this spread it would leave it after about "
                         "%s pairs (the half-width under the %.2f%% between the figure and the target)."
                         % (q["title"], "%d" % math.ceil(len(xs) * (h / gap) ** 2) if gap else "no number of",
                            gap * 100))
    for q, label in ((QUESTIONS[0], "bench/target.c, CPU"), (QUESTIONS[1], "bench/threadpool.c, time per step")):
        o, ai, ao = (fitted_effect(q, fits, w) for w in (ORDER, AFTER_IN, AFTER_OUT))
        if o and ai and ao:
            notes.append("- %s, from the fit over all its pairs (%d degrees of freedom): a pair's run without takes "
                         "%s more right after its own shim run, a pair's first run %s more after the shim run "
                         "that ended the pair before (the after-effects); a pair's second run %s more than its "
                         "first." % (label, fits[q["measure"]]["df"], fmt_fig(ai), fmt_fig(ao), fmt_fig(o)))
    share = sampling_share(got, fits)
    if share:
        idle = fitted(QUESTIONS[3], fits) or figure(QUESTIONS[3], got["pool_idle"])
        notes.append("- bench/threadpool.c: what sampling itself costs, the 199 Hz constant less the "
                     "sampling-off one: throughput loss %s. The rest of the 199 Hz figure is what the shim's "
                     "presence does to this pool (the sampling-off row); an idle thread in the process and no "
                     "shim: %s (the idle-thread row)." % (fmt_fig(share), fmt_fig(idle)))
    L += [""] + notes
    errs = machine["errors"]
    if errs:
        L.append("- pairs left out (profiled and A/A, both programs): %d (%s)" % (len(errs), "; ".join(sorted(set(errs)))))
    L.append("- The A/A interval should hold 0 in about 19 runs of 20: a 95% interval that misses it once is "
             "chance.")
    L.append("- met: the whole interval of the stated (fitted) figure is at or under the target; MISSED: the "
             "whole interval is over it; otherwise not resolved: the cost lies within the interval's "
             "half-width of the target.")
    return L


def from_pairs(args):
    """The section written again from a saved resolve_pairs.json: {"machine", "want", "budget",
    "pairs"} as main saves it, each pair {"question", "config", "with_first", "prev_shim",
    "log_ratio", "error"} in the order run."""
    with open(args.from_pairs) as f:
        doc = json.load(f)
    keys = {q["key"]: q for q in QUESTIONS}
    got = {k: [] for k in keys}
    aa = {k: [] for k in keys}
    tries = {k: 0 for k in keys}
    errors = []
    for p in doc["pairs"]:
        k = p["question"]
        is_aa = p["config"] == AA["name"]
        tries[k] += 0 if is_aa else 1
        if p["error"]:
            errors.append(p["error"])
        else:
            (aa if is_aa else got)[k].append((p["log_ratio"], p["with_first"], p["prev_shim"]))
    machine = dict(doc["machine"], errors=errors,
                   pairs_file="`%s` (this section written again from it)" % os.path.relpath(args.from_pairs))
    args.budget = doc.get("budget", args.budget)
    pool.replace_section(args.results, "## The defaults' cost at 199 Hz, resolved",
                         section(args, got, aa, tries, doc["want"], machine))
    print("bench: resolved section written again from %s" % args.from_pairs)
    return 0


def main():
    ap = argparse.ArgumentParser()
    analyze.run_args(ap)
    ap.add_argument("--pool", required=True, help="bench/threadpool.c, built")
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--budget", type=float, default=2400, help="stop starting pairs after this many seconds")
    ap.add_argument("--cpu-n", type=int, default=240, help="profiled pairs on the work target")
    ap.add_argument("--pool-n", type=int, default=120, help="profiled pairs on the thread pool")
    ap.add_argument("--extra-n", type=int, default=40,
                    help="pairs on the pool with sampling off, and with an idle thread instead of the shim")
    ap.add_argument("--idle-thread", required=True, help="bench/idlethread.c built as a shared library")
    ap.add_argument("--iters", default="")
    ap.add_argument("--from-pairs", default="",
                    help="write the section again from a resolve_pairs.json (no run): the same pairs, "
                         "this code's statistics")
    args = ap.parse_args()
    if args.from_pairs:
        return from_pairs(args)
    os.makedirs(args.work, exist_ok=True)
    argv = [os.path.abspath(args.target)] + ([args.iters] if args.iters else [])
    analyze.RUN_TIMEOUT_S = max(analyze.RUN_TIMEOUT_S, pool.POOL_TIMEOUT_S)
    machine = report.machine_info()
    want = {"cpu": args.cpu_n, "pool": args.pool_n, "pool_hz0": args.extra_n, "pool_idle": args.extra_n}
    got = {q["key"]: [] for q in QUESTIONS}
    aa = {q["key"]: [] for q in QUESTIONS}
    tries = {q["key"]: 0 for q in QUESTIONS}
    aa_tries = {q["key"]: 0 for q in QUESTIONS}
    orders = {q["key"]: draw_orders(q["key"] + "-ps", want[q["key"]]) for q in QUESTIONS}
    aa_orders = {q["key"]: draw_orders(q["key"] + "-aa", -(-want[q["key"]] // AA_EVERY)) for q in QUESTIONS}
    errors = []
    start = time.monotonic()
    print("bench: resolving the defaults' cost at 199 Hz (%s), budget %.0f s; load %s"
          % (", ".join("%s: %d pairs" % (q["title"], want[q["key"]]) for q in QUESTIONS), args.budget,
             machine["loadavg_start"]), flush=True)
    done = 0
    prev = None   # whether the run before the next pair was a shim run (1/0); None: not known
    log = []      # every pair in the order run, written beside RESULTS.md (resolve_pairs.json)

    def run_one(q, cfg, wf, into):
        nonlocal prev
        x, err = run_pair(q, cfg, args, argv, done, with_first=wf)
        log.append({"question": q["key"], "config": cfg["name"], "with_first": wf, "prev_shim": prev,
                    "log_ratio": x, "error": err})
        if err:
            errors.append(err)
        else:
            into.append((x, wf, prev))
        # the pair's last run: the with run when it went second
        prev = None if err else int(shim_run(cfg) and not wf)

    while True:
        # the question furthest behind its share goes next
        left = [q for q in QUESTIONS if tries[q["key"]] < want[q["key"]]]
        elapsed = time.monotonic() - start
        if not left or (done and elapsed + elapsed / done > args.budget):
            break
        q = min(left, key=lambda q: tries[q["key"]] / want[q["key"]])
        k = q["key"]
        wf = orders[k][tries[k]]
        tries[k] += 1
        run_one(q, q["cfg"], wf, got[k])
        if q["aa"] and tries[k] % AA_EVERY == 0:
            wf = aa_orders[k][aa_tries[k]]
            aa_tries[k] += 1
            run_one(q, AA, wf, aa[k])
        done += 1
        if done % 20 == 0:
            print("  %.0f s  %s" % (time.monotonic() - start, "  ".join(
                "%s %d pairs %s" % (q["key"], len(got[q["key"]]), fmt_fig(figure(q, got[q["key"]])))
                for q in QUESTIONS)), flush=True)
    # beside RESULTS.md, so that its section can be written again from the same pairs (--from-pairs)
    pairs_file = os.path.join(os.path.dirname(os.path.abspath(args.results)), "resolve_pairs.json")
    machine.update(elapsed_s=time.monotonic() - start, loadavg_end=report.loadavg(), errors=errors,
                   pairs_file="`%s`" % os.path.relpath(pairs_file))
    with open(pairs_file + ".tmp", "w") as f:
        json.dump({"machine": machine, "want": want, "budget": args.budget, "pairs": log}, f, indent=0)
    os.replace(pairs_file + ".tmp", pairs_file)
    pool.replace_section(args.results, "## The defaults' cost at 199 Hz, resolved",
                         section(args, got, aa, tries, want, machine))
    print("bench: resolved section written (%.0f s)" % machine["elapsed_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
