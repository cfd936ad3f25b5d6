#!/usr/bin/env bash
# t_shim_markers: the markers file's rules (docs/formats.md), and the in-process API.
# A target idles under the shim while this test writes the markers file:
# - the file is created by the shim when missing;
# - comments and blank lines are skipped (no boundary, not logged as bad);
# - bad lines are logged in perfscope.log with their line number, and the lines after them taken;
# - a name of exactly 64 bytes is taken, one of 65 is bad;
# - a line written in two parts 100 ms apart gives one boundary;
# - a line over 4 KiB is cut and logged, and its tail never becomes a boundary of its own;
# - two writer processes appending at once: every boundary present exactly once, t= exact;
# - a line written just before the process exits is still recorded.
# Then include/perfscope.h's perfscope_begin/perfscope_end give boundaries with source "api".
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_idle
build_target t_api

python3 - <<'EOF'
import collections, json, os, re, subprocess, sys, time
import samples
from shimlib import *

markers = os.path.abspath("markers")          # missing: the shim creates it
env = shim_env("out", HZ=199, LLMPERFSCOPE_MARKERS=markers)
p = subprocess.Popen([target("t_idle")], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)


def stop(msg):
    p.kill()
    p.communicate()
    die(msg)


deadline = time.monotonic() + 5
while not os.path.exists(markers):
    if time.monotonic() > deadline or p.poll() is not None:
        stop("the shim did not create the missing markers file %s within 5 s" % markers)
    time.sleep(0.01)
if not os.path.isfile(markers):
    stop("%s is not a regular file" % markers)

fd = os.open(markers, os.O_WRONLY | os.O_APPEND)
lineno = 0
expect = collections.Counter()       # (name, event) -> times expected
exact_t = {}                         # (name, event) -> t
bad, skipped = [], []
long_line = None


def put(text, kind="good", name=None, event=None, t=None):
    """Write one line with one write (unless kind is 'partial')."""
    global lineno, long_line
    lineno += 1
    if kind == "good":
        expect[(name, event)] += 1
        if t is not None:
            exact_t[(name, event)] = t
    elif kind == "bad":
        bad.append(lineno)
    elif kind == "skip":
        skipped.append(lineno)
    elif kind == "long":
        long_line = lineno
    os.write(fd, text.encode() + b"\n")


now = time.monotonic_ns
put("# a comment: good0 begin", "skip")
put("", "skip")
t = now(); put("good1 begin t=%d" % t, name="good1", event="begin", t=t)
put("this is bad", "bad")
t = now(); put("good1 end t=%d tokens=5" % t, name="good1", event="end", t=t)
put("bad/name begin", "bad")
put("good2 sideways", "bad")
put("good2 begin t=notanumber", "bad")
put("n" * 65 + " begin", "bad")
put("#another comment", "skip")
put("n" * 64 + " begin", name="n" * 64, event="begin")
put("good2 begin", name="good2", event="begin")
# A partial line: half, 100 ms, the rest.
lineno += 1
partial_line = lineno
expect[("good2", "end")] += 1
os.write(fd, b"good2 e")
time.sleep(0.1)
os.write(fd, b"nd tokens=9\n")
# Over 4 KiB: cut and logged; the tail must not be read as a line of its own.
# (bytes 3896..4296 are spaces, so wherever near 4096 it is cut, a tail read as a line of its own
# would be "tailname begin")
put("long begin note=" + "x" * 3880 + " " * 400 + "tailname begin", "long")
t = now(); put("afterlong begin t=%d" % t, name="afterlong", event="begin", t=t)
t = now(); put("afterlong end t=%d" % t, name="afterlong", event="end", t=t)
os.close(fd)


def wait_for(n, what, timeout=5):
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        try:
            rows = [r for r in samples.read_jsonl("out/phases.jsonl") if r.get("source") == "file"]
        except (OSError, ValueError):
            rows = []
        if len(rows) >= n:
            return rows
        time.sleep(0.05)
    stop("%s: %d boundaries in phases.jsonl after %d s, expected at least %d" % (what, len(rows), timeout, n))


wait_for(sum(expect.values()), "single writer")

# Two writer processes appending at once.
N = 200
writer = r'''
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
name, base = sys.argv[2], int(sys.argv[3])
for i in range(int(sys.argv[4])):
    os.write(fd, b"%s begin t=%d i=%d\n" % (name.encode(), base + 2 * i, i))
    os.write(fd, b"%s end t=%d i=%d tokens=1\n" % (name.encode(), base + 2 * i + 1, i))
'''
base = now()
ws = [subprocess.Popen([sys.executable, "-c", writer, markers, w, str(base + k * 10**6), str(N)],
                       env=plain_env()) for k, w in enumerate(("wa", "wb"))]
for w in ws:
    if w.wait(timeout=30) != 0:
        stop("a writer process failed")
expect[("wa", "begin")] += N
expect[("wa", "end")] += N
expect[("wb", "begin")] += N
expect[("wb", "end")] += N
wait_for(sum(expect.values()), "two writers", timeout=10)

# The last line, then exit at once.
t = now()
with open(markers, "a") as f:
    f.write("last begin t=%d\n" % t)
expect[("last", "begin")] += 1
exact_t[("last", "begin")] = t
out, err = p.communicate(b"", timeout=30)
check(p.returncode == 0, "t_idle exit status %s" % p.returncode)
check(out == b"" and err == b"", "the shim wrote output: %r %r" % (out[:200], err[:300]))

rows = samples.read_phases("out/phases.jsonl")
got = collections.Counter((r["name"], r["event"]) for r in rows if r["source"] == "file")
for key, n in sorted(expect.items()):
    check(key[0] in ("wa", "wb") or got.get(key, 0) == n,
          "phases.jsonl: %s %s: %d boundaries, expected %d" % (key[0][:20], key[1], got.get(key, 0), n))
for key, n in sorted(got.items()):
    check(key in expect or key == ("long", "begin"),
          "phases.jsonl: unexpected boundary %r x%d" % (key[0][:80], n))
if got.get(("long", "begin"), 0) > 1:
    fail("phases.jsonl: the long line gave %d boundaries" % got[("long", "begin")])
for r in rows:
    key = (r["name"], r["event"])
    if key in exact_t and r["t_ns"] != exact_t[key]:
        fail("phases.jsonl: %s %s: t_ns %d, the line said t=%d" % (key[0], key[1], r["t_ns"], exact_t[key]))
    check(key != ("good2", "end") or str(r["attrs"].get("tokens")) == "9",
          "phases.jsonl: the partial line's attrs %r, expected tokens=9" % r["attrs"])
# the two writers: each (writer, i, event) once, with its exact t
seen = collections.Counter()
for r in rows:
    if r["name"] in ("wa", "wb"):
        i = int(r["attrs"].get("i", -1))
        seen[(r["name"], i, r["event"])] += 1
        k = ("wa", "wb").index(r["name"])
        want_t = base + k * 10**6 + 2 * i + (r["event"] == "end")
        check(r["t_ns"] == want_t,
              "phases.jsonl: %s i=%d %s: t_ns %d, the line said t=%d" % (r["name"], i, r["event"], r["t_ns"], want_t))
for w in ("wa", "wb"):
    for i in range(N):
        for ev in ("begin", "end"):
            check(seen[(w, i, ev)] == 1,
                  "phases.jsonl: writer %s line i=%d %s: %d boundaries, expected 1" % (w, i, ev, seen[(w, i, ev)]))

# perfscope.log: each bad line logged with its number; comments and blank lines not.
require(os.path.exists("out/perfscope.log"), "no out/perfscope.log, though bad marker lines were written")
log = open("out/perfscope.log", errors="replace").read().replace(markers, "MARKERS")
mlines = [l for l in log.splitlines() if re.search(r"marker|line", l, re.I)]
info("perfscope.log marker lines:\n#   " + "\n#   ".join(l[:200] for l in mlines))


def mentions(n):
    pat = re.compile(r"(?<![0-9A-Za-z_.])%d(?![0-9A-Za-z_])" % n)
    return [l for l in mlines if pat.search(l)]


for n in bad:
    check(mentions(n), "bad marker line %d is not logged with its line number in perfscope.log" % n)
for n in skipped:
    check(not mentions(n), "comment/blank line %d was logged: %s" % (n, mentions(n)))
check(not mentions(partial_line), "the partial line %d was logged: %s" % (partial_line, mentions(partial_line)))
check(mentions(long_line) or any(re.search(r"4096|4 ?KiB|long", l, re.I) for l in mlines),
      "the line over 4 KiB (line %d) is not logged" % long_line)

# The in-process API.
res = run([target("t_api")], plain_env(), what="t_api without the shim")
expect_ok(res, "t_api without the shim")
check(res.stdout == b"done\n", "t_api without the shim printed %r" % res.stdout)
res2 = run([target("t_api")], shim_env("api-out", HZ=199), what="t_api")
expect_ok(res2, "t_api under the shim")
check(res2.stdout == res.stdout and res2.stderr == res.stderr, "t_api's output changed under the shim")
rows = samples.read_phases("api-out/phases.jsonl")
for r in rows:
    info("api phase %s" % json.dumps({k: v for k, v in r.items() if k != "counters"}))
seq = [(r["name"], r["event"], r["source"]) for r in rows]
want = [("api_outer", "begin", "api"), ("api_inner", "begin", "api"), ("api_inner", "end", "api"),
        ("api_outer", "end", "api")]
require(seq == want, "api boundaries %s, expected %s" % (seq, want))
ts = [r["t_ns"] for r in rows]
check(ts == sorted(ts) and res2.t0 <= ts[0] and ts[-1] <= res2.t1, "api boundary times %s not in order within the run" % ts)
check(ts[1] - ts[0] >= 15_000_000 and ts[3] - ts[2] >= 15_000_000,
      "api boundaries not at the calls' times (20 ms of CPU between them): %s" % ts)
check(str(rows[2]["attrs"].get("tokens")) == "42", "api_inner end: attrs %r, expected tokens 42" % rows[2]["attrs"])
check("tokens" not in rows[3]["attrs"], "api_outer end (tokens -1): attrs %r, expected no tokens" % rows[3]["attrs"])
finish()
EOF
