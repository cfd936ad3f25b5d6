"""fdiff_check.py TOOL W: the function-level diff (`diff --profiles`) on the runs that
tests/t_tools_fdiff.sh made in W (a, a2: fd_target's A build, 5 runs each; b: the B build, 50% more
in kern_ffn in decode). Checks (tests/checks.py): B against A names kern_ffn first in decode, with
p < 0.05 and significant after Holm's correction; the text's headline; the real A-against-A
comparison is printed (its outcome is chance). Then 20 seeded A/A trials: 10 copies of one real
A run (mtimes kept, so its profile.json stays fresh) whose stacks.folded is rewritten per trial
with Poisson counts from a fixed template (a seeded generator: the same counts every time); the
false findings (tested functions at uncorrected p < 0.05, and trials naming a significant
function) must stay within a binomial bound of what chance gives (P < 0.001), and trial 0
names nothing significant (the same counts every time). Bad input: one
stderr line, exit 2.
"""
import json
import math
import os
import random
import shutil
import subprocess
import sys

from checks import check, finish, require

TOOL, W = sys.argv[1], sys.argv[2]


def fdiff(a, b, *opts, as_json=True):
    args = [TOOL, "diff", "--profiles", *opts] + (["--json"] if as_json else []) + a + ["--"] + b
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    out = json.loads(p.stdout) if as_json and p.returncode == 0 else p.stdout
    return p.returncode, out, p.stderr


def group(doc, name):
    return next((g for g in doc["groups"] if g["group"] == name), None)


def shown(g):
    return [f for f in g["functions"] if f["shown"]]


def binomial_bound(n, p, tail=0.001):
    """The smallest k with P(X >= k) < tail for X ~ Binomial(n, p): more findings than k - 1 would
    be beyond chance."""
    cdf = 0.0
    for k in range(n + 1):
        cdf += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if 1 - cdf < tail:
            return k  # P(X >= k + 1) < tail: k findings are still chance
    return n


def real_runs():
    a, b, a2 = os.path.join(W, "a"), os.path.join(W, "b"), os.path.join(W, "a2")
    rc, doc, err = fdiff([a], [b])
    require(rc == 0, "diff --profiles A -- B: exit %d (%s)" % (rc, err.strip()))
    check(len(doc["a_runs"]) == 5 and len(doc["b_runs"]) == 5, "5 runs a side: %s" % doc["a_runs"])
    dec = group(doc, "decode")
    require(dec is not None and dec["unit"] == "token", "decode compared per token: %s" % [g["group"] for g in doc["groups"]])
    first = shown(dec)[0] if shown(dec) else None
    check(first is not None and first["name"] == "kern_ffn", "decode: kern_ffn first (%s)" % (first and first["name"]))
    if first:
        check(first["self"]["p"] < 0.05 and first["significant"] and first["share"] > 0.8,
              "kern_ffn: p %s, significant %s, share %s" % (first["self"]["p"], first["significant"], first["share"]))
        # 0.1 s -> 0.15 s of 0.2 s: +25 pp of A's decode, within sampling
        check(20 < first["self"]["pp"] < 30 and 20 < dec["total"]["pp"] < 30,
              "kern_ffn +%.1f pp, decode %+.1f%%" % (first["self"]["pp"], dec["total"]["pp"]))
    # (Whether another function, or another group, comes out significant in these 5 real runs
    # is chance, or drift of a loaded machine: the A/A trials below bound it.)
    print("# A against B: significant %s" % [(g["group"], f["name"]) for g in doc["groups"]
                                           for f in g["functions"] if f["significant"]])
    check(any(s["frames"][-1] == "kern_ffn" and s["b"] > s["a"] for s in dec["stacks"]),
          "decode's stacks: kern_ffn's stack with B above A")
    rc, text, err = fdiff([a], [b], as_json=False)
    head = [l for l in text.splitlines() if l.startswith("decode ")]
    check(rc == 0 and head and head[0].startswith("decode +") and ": kern_ffn +" in head[0] and
          head[0].endswith(" pp of it (p 0.0079)"), "headline: %r" % head)
    rc, doc, err = fdiff([a], [a2])
    require(rc == 0, "diff --profiles A -- A: exit %d (%s)" % (rc, err.strip()))
    sig = [(g["group"], f["name"]) for g in doc["groups"] for f in g["functions"] if f["significant"]]
    print("# A against A (real runs): significant %s; decode %+.2f%% (p %s)" %
          (sig, group(doc, "decode")["total"]["pp"], group(doc, "decode")["total"]["p"]))
    return a


TEMPLATE = [("prefill", "_start;main;kern_prefill", 50), ("prefill", "_start;main;kern_prefill;clock_gettime", 2),
            ("decode", "_start;main;kern_attn", 100), ("decode", "_start;main;kern_ffn", 100),
            ("decode", "_start;main;kern_attn;clock_gettime", 3)] + \
           [("decode", "_start;main;helper_%d" % k, 8 + 4 * k) for k in range(6)]


def poisson(rng, lam):
    # Knuth's method, fine for these means
    limit, k, prod = math.exp(-lam), 0, rng.random()
    while prod > limit:
        k += 1
        prod *= rng.random()
    return k


def aa_trials(base):
    src = os.path.join(base, "r1")
    copies = []
    for i in range(10):
        d = os.path.join(W, "aa", "r%02d" % i)
        shutil.copytree(src, d, copy_function=shutil.copy2)  # mtimes kept: profile.json stays fresh
        copies.append(d)
    tests = raw = trials_sig = 0
    for trial in range(20):
        rng = random.Random(1000 + trial)
        for d in copies:
            with open(os.path.join(d, "stacks.folded"), "w") as f:
                for g, stack, lam in TEMPLATE:
                    n = poisson(rng, lam)
                    if n:
                        f.write("%s;%s %d\n" % (g, stack, n))
        rc, doc, err = fdiff(copies[:5], copies[5:])
        if not check(rc == 0, "A/A trial %d: exit %d (%s)" % (trial, rc, err.strip())):
            continue
        tests += sum(g["tested"] for g in doc["groups"])
        raw += sum(g["uncorrected_below_p"] for g in doc["groups"])
        sig = sum(g["significant"] for g in doc["groups"])
        trials_sig += sig > 0
        if trial == 0:
            check(sig == 0, "A/A trial 0 names nothing significant (%d)" % sig)
    bound_raw, bound_trials = binomial_bound(tests, 0.05), binomial_bound(20, 0.05)
    print("# A/A: %d of %d tested functions at uncorrected p < 0.05 (chance %.1f, bound %d); "
          "%d of 20 trials named a significant function (Holm; chance 1, bound %d)" %
          (raw, tests, 0.05 * tests, bound_raw, trials_sig, bound_trials))
    check(tests >= 20 * 8, "A/A: every trial tested its functions (%d tests)" % tests)
    check(raw <= bound_raw, "A/A: %d uncorrected false findings within chance (<= %d)" % (raw, bound_raw))
    check(trials_sig <= bound_trials, "A/A: %d trials with a finding within chance (<= %d)" % (trials_sig, bound_trials))


def bad_input(base):
    plain = os.path.join(W, "plain")
    shutil.copytree(os.path.join(base, "r1"), plain, copy_function=shutil.copy2)
    with open(os.path.join(plain, "stacks.folded"), "w") as f:
        f.write("decode;_start;main 12\ndecode;;kern 3\n")
    rc, out, err = fdiff([plain], [os.path.join(base, "r2")])
    check(rc == 2 and len(err.splitlines()) == 1 and "stacks.folded: line 2" in err, "bad stacks.folded: %d %r" % (rc, err))
    rc, out, err = fdiff([os.path.join(W, "nothing")], [os.path.join(base, "r2")])
    check(rc == 2 and len(err.splitlines()) == 1, "missing folder: %d %r" % (rc, err))
    rc, out, err = fdiff([os.path.join(base, "r1")], [])
    check(rc == 2 and "usage" in err, "no B side: usage (%d %r)" % (rc, err))


if __name__ == "__main__":
    base = real_runs()
    aa_trials(base)
    bad_input(base)
    finish()
