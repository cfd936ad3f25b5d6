"""report_html.py: OUT/report.html checked in headless Chromium, for t_tools_report_html.sh.
Usage: report_html.py CHROMIUM OUT EXPECT_JSON, EXPECT_JSON {"frames": [[group, function,
minimum share], ...], "truncated": group, "inline": [group, function]}: in each group's flame
graph each function must be drawn at the width its samples give (and hold at least the minimum
share, so the check means something); the truncated group's cut stacks are marked; the inline
function is marked inline. The first frame's function is searched for. Checks (one FAIL line
each, tests/checks.py):
- the file has no "http:" or "https:" at all, and no src=/href= attribute (nothing is fetched);
- --dump-dom after the scripts ran: no console message (--enable-logging=stderr), one flame
  graph per phase group with samples, each drawn over the group's samples in profile.json, the
  expected function's frames at widths within 1 pp of its share of the group in stacks.folded;
- the URL hash #search=FUNCTION fills the search box: the group's result shows that share, the
  other groups none;
- the memory chart has one point per counters.jsonl line (each power series at most that), the
  timeline one bar per phase occurrence in phases.jsonl;
- a --screenshot of it is not blank (a PNG of many colours)."""
import collections, html, html.parser, json, os, re, struct, subprocess, sys, tempfile, zlib
from checks import check, die, finish, require


class Dom(html.parser.HTMLParser):
    """The flame graphs, charts and search results of the dumped DOM."""
    def __init__(self):
        super().__init__()
        self.flames, self.charts, self.timeline_bars = {}, [], 0
        self.cur = None
        self.gclass = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "") or ""
        if tag == "div" and "ps-flame" in cls.split():
            self.cur = self.flames[a.get("data-title")] = {"rects": [], "svg": None, "result": None}
        elif tag == "div" and "ps-lines" in cls.split():
            self.cur = None
            self.charts.append({"title": a.get("data-title"), "series": []})
        elif tag == "svg" and self.cur is not None and "ps-flame-svg" in cls:
            self.cur["svg"] = a
        elif tag == "g" and self.cur is not None:
            self.gclass = cls
        elif tag == "rect" and self.cur is not None and "data-name" in a:
            a["g"] = self.gclass
            self.cur["rects"].append(a)
        elif tag == "span" and self.cur is not None and "ps-search-result" in cls:
            self.cur["result"] = a
        elif tag == "polyline" and "ps-series" in cls and self.charts:
            self.charts[-1]["series"].append(a)
        elif tag == "rect" and "ps-phase" in cls:
            self.timeline_bars += 1


def chromium(cmd, out, *args):
    prof = tempfile.mkdtemp(prefix="chromium-", dir=os.environ.get("TMPDIR_TEST", None))
    r = subprocess.run(["timeout", "60", cmd, "--headless", "--no-sandbox", "--disable-gpu",
                        "--enable-logging=stderr", "--v=0", "--user-data-dir=" + prof] + list(args),
                       capture_output=True, text=True)
    require(r.returncode == 0, "%s %s: exit %d: %s" % (cmd, " ".join(args), r.returncode, r.stderr[-2000:]))
    return r


def png_colours(path):
    """Distinct byte values of the decompressed image data and its size: a blank page is one
    colour (a few distinct bytes once filtered), a drawn one many."""
    data = open(path, "rb").read()
    require(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    return len(set(raw)), len(data)


def folded_share(path, group, func):
    total, hit = 0, 0
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        frames = stack.split(";")
        if frames[0] != group:
            continue
        total += int(n)
        if func in frames[1:]:
            hit += int(n)
    return (hit / total if total else 0.0), total


def power(cmd, out, watts):
    """--power CHROMIUM OUT WATTS: OUT's counters.jsonl has one RAPL zone at a constant power:
    the page's power chart has one line of one point per counters.jsonl line, each at WATTS."""
    page = os.path.abspath(os.path.join(out, "report.html"))
    r = chromium(cmd, out, "--dump-dom", "file://" + page)
    check(not [l for l in r.stderr.splitlines() if ":CONSOLE" in l], "console messages on the power page")
    dom = Dom()
    dom.feed(r.stdout)
    lines = sum(1 for l in open(os.path.join(out, "counters.jsonl")) if l.strip())
    pw = [c for c in dom.charts if c["title"].startswith("power")]
    require(len(pw) == 1, "power charts: %d" % len(pw))
    pts = [int(x["data-points"]) for x in pw[0]["series"]]
    print("# power chart: %s points, counters.jsonl %d lines" % (pts, lines))
    check(pts == [lines], "power chart: %s points, counters.jsonl has %d lines" % (pts, lines))
    text = open(page, encoding="utf-8").read()
    data = [json.loads(m) for m in re.findall(r'data-kind="lines" data-title="power[^"]*">.*?<script type="application/json" class="ps-data">(.*?)</script>', text, re.S)]
    vals = data[0]["series"][0]["v"] if data else []
    check(vals and all(abs(v - watts) <= 0.02 * watts for v in vals), "power values %s, expected %s W" % (vals[:8], watts))
    finish()


def main():
    if sys.argv[1] == "--power":
        return power(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    cmd, out, expect = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    page = os.path.abspath(os.path.join(out, "report.html"))
    text = open(page, encoding="utf-8").read()
    check(not re.search(r"https?:", text), "report.html holds an http:/https: string: %r" %
          re.search(r".{0,60}https?:.{0,60}", text).group(0) if re.search(r"https?:", text) else "")
    check(not re.search(r"\s(src|href)\s*=", text), "report.html has a src= or href= attribute")
    own = json.load(open(os.path.join(out, "meta.json"))).get("sampling", {}).get("shim_threads_cpu_s")
    m = re.search(r"perfscope&#39;s own threads: ([0-9.]+) CPU s", text)
    check(own is not None and m and abs(float(m.group(1)) - own) < 0.0006,
          "the shim's own cost: meta.json %r, report.html %r" % (own, m and m.group(1)))
    # The header's facts and the CPU column read as report.md's: the page left out the clock,
    # which CPU time the samples count, the delivered rate and the machine before.
    md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
    facts = [l[2:] for l in md.split("\n## ")[0].splitlines() if l.startswith("- ") and not l.startswith("- command:")]
    ul = re.search(r'<ul class="ps-meta">(.*?)</ul>', text, re.S)
    items = [html.unescape(re.sub(r"<[^>]+>", "", x)) for x in re.findall(r"<li>(.*?)</li>", ul.group(1) if ul else "", re.S)]
    check(len(facts) >= 4 and all(f in items for f in facts),
          "report.html's header holds report.md's %d facts: missing %r" % (len(facts), [f for f in facts if f not in items]))
    head = re.search(r"\| wall s \| (CPU s[^|]*?) \|", md)
    check(head and ("<th>%s</th>" % html.escape(head.group(1))) in text,
          "report.html's CPU column is report.md's %r" % (head and head.group(1)))
    # What report.md has beside the tables is on the page too, in the same words: each group's
    # busiest thread, the serial marks by the one rule (the page once marked rows by the wall
    # share alone) and the log.
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    busiest = [l for l in md.splitlines() if l.startswith("Busiest thread: ")]
    check(busiest and all(b in plain for b in busiest),
          "report.html holds report.md's %d busiest-thread lines: missing %r" % (len(busiest), [b for b in busiest if b not in plain]))
    check(" | serial | " not in md or "serial: one thread spent" in plain, "report.html marks rows serial without the legend")
    check(md.count(" | serial | ") == text.count("<td>serial</td>"),
          "serial marks: report.md %d, report.html %d" % (md.count(" | serial | "), text.count("<td>serial</td>")))
    log_md = md.split("\n## Log (perfscope.log)\n\n", 1)[-1].strip().strip("`").strip()
    log_page = re.search(r"<h2>Log \(perfscope.log\)</h2>\s*(?:<p>(.*?)</p>|<pre[^>]*>(.*?)</pre>)", text, re.S)
    check(log_page and html.unescape(log_page.group(1) or log_page.group(2)).strip() == log_md,
          "report.html's log is report.md's %r: %r" % (log_md[:200], log_page and log_page.group(0)[:200]))
    prof = json.load(open(os.path.join(out, "profile.json")))
    folded = os.path.join(out, "stacks.folded")
    first = expect["frames"][0]
    r = chromium(cmd, out, "--dump-dom", "file://%s#search=%s" % (page, first[1]))
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    check(not console, "console messages: %s" % console[:5])
    dom = Dom()
    dom.feed(r.stdout)
    groups = {g: v for g, v in prof["groups"].items() if v.get("samples")}
    titles = {t.split(":")[0]: f for t, f in dom.flames.items()}
    check(sorted(titles) == sorted(groups), "flame graphs %s, expected one per group with samples %s" %
          (sorted(titles), sorted(groups)))
    for g in groups:
        f = titles.get(g)
        if not f or not f["svg"]:
            check(False, "no flame graph drawn for group %s" % g)
            continue
        check(int(f["svg"]["data-samples"]) == groups[g]["samples"], "%s: graph over %s samples, profile.json %d" %
              (g, f["svg"]["data-samples"], groups[g]["samples"]))
        res = f["result"] or {}
        if g != first[0]:
            check(res.get("data-matches") == "0", "%s: search %r matched %s frames" % (g, first[1], res.get("data-matches")))
    for g, func, least in expect["frames"]:
        f = titles.get(g)
        if not f or not f["svg"]:
            continue
        width = float(f["svg"]["width"])
        mine = [x for x in f["rects"] if x["data-name"] == func]
        drawn = sum(float(x["data-width"]) for x in mine) / width
        samples = sum(int(x["data-samples"]) for x in mine)
        want, total = folded_share(folded, g, func)
        print("# %s: %s drawn at %.2f%% of the width (%d samples), stacks.folded %.2f%% of %d" %
              (g, func, 100 * drawn, samples, 100 * want, total))
        check(want >= least, "%s: %s has only %.1f%% of the group in stacks.folded (expected %.0f%% or more)" %
              (g, func, 100 * want, 100 * least))
        check(abs(drawn - want) <= 0.01, "%s: %s drawn at %.2f%% of the width, its samples give %.2f%%" %
              (g, func, 100 * drawn, 100 * want))
        if [g, func] == first[:2]:
            res = f["result"] or {}
            share = float(res.get("data-share", "nan"))
            check(abs(share - 100 * want) <= 1, "%s: search %r reports %s%%, expected %.2f%%" %
                  (g, func, res.get("data-share"), 100 * want))
            check(mine and all("ps-match" in (x.get("class") or "") for x in mine),
                  "%s: search did not highlight %s" % (g, func))
    f = titles.get(expect["truncated"])
    if f:
        cut = [x for x in f["rects"] if "ps-truncated" in x["g"]]
        share = sum(int(x["data-samples"]) for x in cut) / max(1, int(f["svg"]["data-samples"]))
        print("# %s: %d truncated frames, %.1f%% of the samples" % (expect["truncated"], len(cut), 100 * share))
        check(share >= 0.8, "%s: cut stacks marked truncated for %.1f%% of its samples" % (expect["truncated"], 100 * share))
    others = [x for g, f in titles.items() if g != expect["truncated"] for x in f["rects"] if "ps-truncated" in x["g"]]
    check(not others, "frames marked truncated outside %s: %s" % (expect["truncated"], [x["data-name"] for x in others][:5]))
    g, func = expect["inline"]
    f = titles.get(g)
    if f:
        mine = [x for x in f["rects"] if x["data-name"] == func]
        check(mine and all("ps-inline" in x["g"] for x in mine), "%s: %s not marked inline: %s" % (g, func, [x["g"] for x in mine]))
    lines = sum(1 for l in open(os.path.join(out, "counters.jsonl")) if l.strip())
    mem = [c for c in dom.charts if c["title"].startswith("memory")]
    check(len(mem) == 1, "memory charts: %d" % len(mem))
    for c in mem:
        pts = [int(s["data-points"]) for s in c["series"]]
        print("# memory chart: %s points, counters.jsonl %d lines" % (pts, lines))
        check(pts and pts[0] == lines, "memory chart: %s points, counters.jsonl has %d lines" % (pts, lines))
    for c in dom.charts:
        if c["title"].startswith("power"):
            pts = [int(s["data-points"]) for s in c["series"]]
            check(all(0 < p <= lines for p in pts), "power chart: %s points for %d lines" % (pts, lines))
    occ = sum(1 for l in open(os.path.join(out, "phases.jsonl")) if '"begin"' in l)
    check(dom.timeline_bars == occ, "timeline: %d phase bars, phases.jsonl %d begins" % (dom.timeline_bars, occ))
    shot = os.path.abspath("shot.png")
    chromium(cmd, out, "--screenshot=" + shot, "--window-size=1200,2000", "file://" + page)
    ncol, size = png_colours(shot)
    print("# screenshot: %d bytes, %d distinct byte values in its pixels" % (size, ncol))
    check(size > 30000 and ncol > 100, "screenshot looks blank: %d bytes, %d distinct values" % (size, ncol))
    finish()


if __name__ == "__main__":
    main()
