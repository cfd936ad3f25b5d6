"""fdiff_html_check.py TOOL W CHROMIUM: `diff --profiles --html FILE` (report/ab/fdiff_html.c) on
the runs tests/t_tools_fdiff.sh made in W (a: fd_target's A build, b: the B build, 50% more in
kern_ffn in decode), opened in headless Chromium (tests/report_html.py's helpers). Checks
(tests/checks.py):
- the page has no "http:" or "https:" and no src=/href= attribute (nothing is fetched);
- --dump-dom after the scripts ran: no console message; one flame graph per phase group of the
  diff's --json; in decode, kern_ffn's frames are coloured as "more" (data-d > 0, an orange fill:
  red above blue) and drawn at B's share of decode within 1 pp (B's per-stack means in --json);
  the table's kern_ffn row is marked significant;
- a --screenshot of it is not blank (kept as W/fdiff_html.png)."""
import json
import os
import re
import subprocess
import sys

from checks import check, finish, require
from report_html import Dom, chromium, png_colours

TOOL, W, CMD = sys.argv[1], sys.argv[2], sys.argv[3]
page = os.path.join(W, "diff.html")
p = subprocess.run([TOOL, "diff", "--profiles", "--html", page, "--json", os.path.join(W, "a"), "--",
                    os.path.join(W, "b")], capture_output=True, text=True, timeout=300)
require(p.returncode == 0, "diff --profiles --html: exit %d (%s)" % (p.returncode, p.stderr.strip()))
doc = json.loads(p.stdout)
text = open(page, encoding="utf-8").read()
m = re.search(r".{0,60}https?:.{0,60}", text)
check(not m, "the page holds an http:/https: string: %r" % (m.group(0) if m else ""))
check(not re.search(r"\s(src|href)\s*=", text), "the page has a src= or href= attribute")
r = chromium(CMD, W, "--dump-dom", "file://" + os.path.abspath(page))
console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
check(not console, "console messages: %s" % console[:5])
dom = Dom()
dom.feed(r.stdout)
groups = [g["group"] for g in doc["groups"]]
check(sorted(dom.flames) == sorted(groups), "flame graphs %s, expected one per group %s" % (sorted(dom.flames), groups))
check(all(f["svg"] for f in dom.flames.values()), "a graph not drawn: %s" % [t for t, f in dom.flames.items() if not f["svg"]])
dec = next(g for g in doc["groups"] if g["group"] == "decode")
f = dom.flames.get("decode")
if f and f["svg"]:
    mine = [x for x in f["rects"] if x["data-name"] == "kern_ffn"]
    width = float(f["svg"]["width"])
    drawn = sum(float(x["data-width"]) for x in mine) / width
    total_b = sum(s["b"] for s in dec["stacks"])
    want = sum(s["b"] for s in dec["stacks"] if "kern_ffn" in s["frames"]) / total_b
    ds = [float(x.get("data-d", "nan")) for x in mine]
    fills = [tuple(int(v) for v in re.findall(r"\d+", x["fill"])) for x in mine]
    print("# decode: kern_ffn drawn at %.2f%% of the width, B's share %.2f%%; d %s pp; fill %s" %
          (100 * drawn, 100 * want, ds, [x["fill"] for x in mine]))
    check(mine and abs(drawn - want) <= 0.01, "kern_ffn drawn at %.2f%%, B's share %.2f%%" % (100 * drawn, 100 * want))
    check(mine and all(d > 0 for d in ds), "kern_ffn not coloured as more: data-d %s" % ds)
    check(mine and all(len(c) == 3 and c[0] > c[2] for c in fills), "kern_ffn's fill is not orange: %s" % fills)
    ffn = next(x for x in dec["functions"] if x["name"] == "kern_ffn")
    check(ds and abs(ds[0] - ffn["inclusive"]["pp"]) <= 0.5,
          "kern_ffn's d %s, the table's inclusive change %+.2f pp" % (ds, ffn["inclusive"]["pp"]))
row = re.search(r'<tr data-function="kern_ffn" data-significant="(\d)"', text)
check(row and row.group(1) == "1", "the table's kern_ffn row is not marked significant")
shot = os.path.join(os.path.abspath(W), "fdiff_html.png")
chromium(CMD, W, "--screenshot=" + shot, "--window-size=1200,1400", "file://" + os.path.abspath(page))
ncol, size = png_colours(shot)
print("# screenshot: %d bytes, %d distinct byte values in its pixels" % (size, ncol))
check(size > 20000 and ncol > 100, "screenshot looks blank: %d bytes, %d distinct values" % (size, ncol))
finish()
