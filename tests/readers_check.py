#!/usr/bin/env python3
"""readers_check.py: checks the readers in symbolize/ (samples.c, maps.c, phases.c) through
`perfscope-report dump ...` and `perfscope-report OUT`, on synthetic files made here with
struct and json: good files read right, hostile files (cut, lying headers, garbage, empty,
missing) give exit 2 and one stderr line naming the file, or exit 0 with the records that
survive. Sample files are also read by a reimplementation of the reference harness's
_read_samples (cpuprof.py) and both readers must agree.

Run by tests/t_tools_readers.sh from a scratch folder: readers_check.py PERFSCOPE_REPORT.
It must never write outside the current folder. Standard library only. Checks as tests/checks.py:
one FAIL line per failed check, the count at the end, exit 1 when any failed.
"""

import functools
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys

import samples
from checks import check, finish

TOOL = sys.argv[1] if len(sys.argv) > 1 else "perfscope-report"


def run(*args):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, errors="replace", timeout=60)
    return p.returncode, p.stdout, p.stderr


def expect_refused(args, name, why, label):
    """Exit 2, nothing on stdout, exactly one stderr line naming the file and saying why."""
    rc, out, err = run(*args)
    lines = err.splitlines()
    ok = check(rc == 2, f"{label}: exit 2 (got {rc}, stderr {err!r})")
    ok &= check(out == "", f"{label}: nothing on stdout (got {out[:200]!r})")
    ok &= check(len(lines) == 1, f"{label}: one stderr line (got {lines!r})")
    if lines:
        ok &= check(name in lines[0], f"{label}: stderr names {name} ({lines[0]!r})")
        ok &= check(re.search(why, lines[0]) is not None, f"{label}: stderr says /{why}/ ({lines[0]!r})")
    return ok


# ---------------------------------------------------------------- sample files

# The sample file format is tests/samples.py's: files of 8 frames a record, 3 dropped, 997 Hz
# unless said; the reference harness's _read_samples (cpuprof.py), rewritten, is samples.py's too.
sample_file = functools.partial(samples.write_samples, max_frames=8, dropped=3, hz=997)
reference_read_samples = samples.reference_read_samples


def dump_samples(path):
    """(rc, stderr, header dict, records, end dict, note) from `dump samples`."""
    rc, out, err = run("dump", "samples", path)
    header, records, end, note = {}, [], {}, ""
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "header" or kind == "end":
            (header if kind == "header" else end).update(
                (k, int(v)) for k, v in (f.split("=") for f in rest.split()))
        elif kind == "record":
            t, tid, n, frames, comm = rest.split(" ", 4)
            fr = () if frames == "-" else tuple(int(x, 16) for x in frames.split(","))
            check(len(fr) == int(n), f"dump record nframes {n} matches its frames {frames}")
            records.append((int(t), int(tid), comm, fr))
        elif kind == "note":
            note = rest
    return rc, err, header, records, end, note


def make_records(n, max_frames, rng):
    names = ["main", "prefill-0", "prefill-1", "decode-0", "a-sixteen-char-n"]
    recs = []
    for i in range(n):
        depth = rng.randint(0, max_frames)
        frames = [rng.randrange(0x400000, 0x7FFFFFFFFFFF) for _ in range(depth)]
        recs.append((1_000_000_000 + 1_000_000 * i, 100 + i % 3, names[i % len(names)], frames))
    return recs


def agree_with_reference(path, label, expect_records=None, expect_note=None):
    rc, err, header, records, end, note = dump_samples(path)
    ref, dropped, hz = reference_read_samples(path)
    check(rc == 0, f"{label}: exit 0 (got {rc}: {err.strip()})")
    check(records == ref, f"{label}: records equal the reference reader's "
                          f"({len(records)} vs {len(ref)})")
    check(header.get("dropped") == dropped and header.get("hz") == hz, f"{label}: dropped, hz")
    check(end.get("records") == len(ref), f"{label}: end records= {end.get('records')} == {len(ref)}")
    if expect_records is not None:
        check(len(records) == expect_records, f"{label}: {expect_records} records (got {len(records)})")
    if expect_note is not None:
        check(re.search(expect_note, note) is not None, f"{label}: note /{expect_note}/ (got {note!r})")
    elif note:
        check(False, f"{label}: no note expected (got {note!r})")
    return records


def test_samples():
    rng = random.Random(7)
    recs = make_records(60, 8, rng)
    sample_file("good.bin", recs)
    got = agree_with_reference("good.bin", "good sample file", expect_records=60)
    check(got and got[0] == (recs[0][0], recs[0][1], recs[0][2], tuple(recs[0][3])),
          "good sample file: first record as written")

    size = samples.record_size(8)
    sample_file("cut.bin", recs, cut=size - 17)  # 59 whole records, then 17 bytes of the 60th
    agree_with_reference("cut.bin", "cut mid-record", expect_records=59,
                         expect_note="mid-record")

    sample_file("count-big.bin", recs[:25], count=1000)
    agree_with_reference("count-big.bin", "header count larger than file", expect_records=25,
                         expect_note="header says 1000 records, file holds 25")

    sample_file("count-huge.bin", recs[:5], count=2**64 - 1)
    agree_with_reference("count-huge.bin", "header count 2^64-1", expect_records=5,
                         expect_note="file holds 5")

    sample_file("count-small.bin", recs, count=10)
    agree_with_reference("count-small.bin", "header count smaller than file", expect_records=10,
                         expect_note="50 whole records after the header's count")

    sample_file("header-only.bin", [])
    agree_with_reference("header-only.bin", "header and no record", expect_records=0)

    deep = [(5, 9, "deep", list(range(1, 9)))]
    sample_file("nframes-big.bin", deep + recs[:3], max_frames=8)
    with open("nframes-big.bin", "r+b") as f:  # the first record claims 1000 frames
        f.seek(40 + 12)
        f.write(struct.pack("<I", 1000))
    got = agree_with_reference("nframes-big.bin", "nframes > max_frames", expect_records=4,
                               expect_note="nframes > max_frames 8 .clamped")
    check(got and got[0][3] == tuple(range(1, 9)), "nframes > max_frames: clamped to 8 frames")

    sample_file("max256.bin", make_records(3, 256, rng), max_frames=256)
    agree_with_reference("max256.bin", "max_frames 256", expect_records=3)

    # Runs of one name and changes between them (samples.c shows a name the last record had as
    # it showed it then).
    runs = [(2_000_000_000 + i, 200 + i % 2, name, [0x400000 + i])
            for i, name in enumerate(["main"] * 3 + ["decode-0"] * 2 + ["main", "a-sixteen-char-n"] * 2)]
    sample_file("name-runs.bin", runs)
    agree_with_reference("name-runs.bin", "runs of one thread name", expect_records=len(runs))

    # A file big enough to be read through its mapping (format/filemap.c: 2 MiB and more), a
    # header count short of it (the records after it are not used) and a cut last record.
    big = make_records(5000, 64, rng)
    sample_file("mapped.bin", big, max_frames=64, count=4990, cut=100)
    check(os.path.getsize("mapped.bin") >= 2 << 20, "mapped.bin is 2 MiB or more")
    agree_with_reference("mapped.bin", "a mapped file", expect_records=4990,
                         expect_note="mid-record")

    # Refused: one stderr line naming the file.
    for mf in (0, 257, 100000):
        name = f"maxframes-{mf}.bin"
        sample_file(name, [], max_frames=8)
        with open(name, "r+b") as f:
            f.seek(24)
            f.write(struct.pack("<Q", mf))
        expect_refused(["dump", "samples", name], name, "max_frames", f"max_frames {mf}")
    with open("garbage.bin", "wb") as f:
        f.write(bytes(random.Random(1).randrange(256) for _ in range(5000)))
    expect_refused(["dump", "samples", "garbage.bin"], "garbage.bin", "magic", "garbage sample file")
    open("empty.bin", "wb").close()
    expect_refused(["dump", "samples", "empty.bin"], "empty.bin", "empty", "empty sample file")
    with open("short-header.bin", "wb") as f:
        f.write(struct.pack("<3Q", samples.MAGIC, 1, 0)[:20])
    expect_refused(["dump", "samples", "short-header.bin"], "short-header.bin", "truncated header",
                   "header cut at 20 bytes")
    expect_refused(["dump", "samples", "missing.bin"], "missing.bin", "No such file", "missing sample file")
    os.mkdir("a-folder.bin")
    expect_refused(["dump", "samples", "a-folder.bin"], "a-folder.bin", "not a regular file",
                   "folder as sample file")


# ---------------------------------------------------------------- maps

def test_maps():
    with open("good.maps", "w") as f:
        f.write("00001000-00002000 r-xp 00000000 fd:01 11 /usr/lib/liba.so\n"
                "00002000-00003000 rw-p 00001000 fd:01 11 /usr/lib/liba.so\n"
                "00010000-00011000 rw-p 00000000 00:00 0\n"
                "7ffd0000-7ffd1000 r-xp 00000000 00:00 0                          [vdso]\n"
                "# t=500\n"
                "00001000-00002000 r-xp 00004000 fd:01 12 /tmp/my lib.so\n"
                "00005000-00006000 r-xp 00000000 fd:01 11 /usr/lib/liba.so\n")
    queries = {"1500@0": "1000-2000 /usr/lib/liba.so", "1500@499": "1000-2000 /usr/lib/liba.so",
               "1500@500": "1000-2000 /tmp/my lib.so", "1fff@999999999999": "1000-2000 /tmp/my lib.so",
               "2000@0": "2000-3000 /usr/lib/liba.so", "2000@600": "none", "5000@600": "5000-6000 /usr/lib/liba.so",
               "10010@1": "10000-11000 [anon]", "7ffd0010@1": "7ffd0000-7ffd1000 [vdso]", "0@0": "none",
               "ffffffffffffffff@0": "none"}
    rc, out, err = run("dump", "maps", "good.maps", *queries)
    check(rc == 0, f"good maps: exit 0 ({err.strip()})")
    check("snapshot t=0 n=4" in out and "snapshot t=500 n=2" in out, "good maps: two snapshots")
    for q, want in queries.items():
        check(f"lookup {q} {want}\n" in out, f"maps lookup {q} -> {want}")
    check("end snapshots=2 bad_lines=0 cut_lines=0 empty_snapshots=0" in out, "good maps: clean")

    # A file that starts with "# t=": that first snapshot serves earlier times too; bad lines
    # are counted; a last line without '\n' is a cut write; an empty last snapshot is dropped.
    with open("odd.maps", "w") as f:
        f.write("# t=300\n"
                "00001000-00002000 r-xp 00000000 fd:01 11 /usr/lib/liba.so\n"
                "this is not a mapping\n"
                "00003000-00002000 r-xp 00000000 fd:01 11 /backwards\n"
                "# a comment\n"
                "\n"
                "# t=900\n"
                "# t=1000\n"
                "00001000-00002000 r-xp 00000000 fd:01 11 /usr/lib/libb.so\n"
                "00008000-00009000 r-xp 00000000 fd:01 11 /usr/lib/libcut")
    rc, out, err = run("dump", "maps", "odd.maps", "1000@5", "1000@950", "1000@1000", "8000@2000")
    check(rc == 0, f"odd maps: exit 0 ({err.strip()})")
    check("lookup 1000@5 1000-2000 /usr/lib/liba.so" in out, "odd maps: first snapshot before its t")
    check("lookup 1000@950 1000-2000 /usr/lib/liba.so" in out, "odd maps: empty snapshot dropped")
    check("lookup 1000@1000 1000-2000 /usr/lib/libb.so" in out, "odd maps: later snapshot")
    check("lookup 8000@2000 none" in out, "odd maps: cut last line not used")
    check("end snapshots=2 bad_lines=2 cut_lines=1 empty_snapshots=1" in out,
          f"odd maps: counts ({out.splitlines()[-1] if out else ''})")

    with open("garbage.maps", "wb") as f:
        f.write(bytes(random.Random(2).randrange(256) for _ in range(3000)))
    expect_refused(["dump", "maps", "garbage.maps"], "garbage.maps", "no mapping", "garbage maps")
    open("empty.maps", "w").close()
    expect_refused(["dump", "maps", "empty.maps"], "empty.maps", "empty", "empty maps")
    expect_refused(["dump", "maps", "missing.maps"], "missing.maps", "No such file", "missing maps")
    with open("long.maps", "w") as f:  # one endless line: capped, not kept
        f.write("00001000-00002000 r-xp 00000000 fd:01 11 /" + "x" * 100000 + "\n")
    expect_refused(["dump", "maps", "long.maps"], "long.maps", "no mapping", "over-long maps line")


# ---------------------------------------------------------------- phases

def phase_line(t, name, event, tokens=None, source="file", t_as_string=False):
    obj = {"t_ns": str(t) if t_as_string else t, "name": name, "event": event, "source": source,
           "attrs": {} if tokens is None else {"tokens": tokens}, "counters": {"rss_anon_kib": 1}}
    return json.dumps(obj)


def innermost_model(events, t):
    """Brute force: replay the boundaries up to t; the innermost is the latest begun still open."""
    stack = []
    for (bt, seq, name, event) in sorted(events):
        if bt > t:
            break
        if event == "begin":
            stack.append(name)
        else:
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] == name:
                    del stack[i]
                    break
    return stack[-1] if stack else "(none)"


def dump_phases(path, queries=()):
    rc, out, err = run("dump", "phases", path, *[str(q) for q in queries])
    at = {}
    end = {}
    phases = []
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "at":
            at[int(parts[1])] = parts[2]
        elif parts[0] == "end":
            end = {k: int(v) for k, v in (p.split("=") for p in parts[1:])}
        elif parts[0] == "phase":
            phases.append(parts[1:])
    return rc, err, at, end, phases


def test_phases():
    lines = [phase_line(100, "request", "begin"), phase_line(110, "load", "begin"),
             phase_line(200, "load", "end"), phase_line(200, "prefill", "begin"),
             phase_line(300, "prefill", "end", "512"), phase_line(300, "decode", "begin", t_as_string=True),
             phase_line(400, "decode", "end", 128, source="api"), phase_line(450, "request", "end")]
    with open("nested.jsonl", "w") as f:
        f.write("\n".join(lines) + "\n")
    want = {50: "(none)", 100: "request", 110: "load", 199: "load", 200: "prefill", 299: "prefill",
            300: "decode", 399: "decode", 400: "request", 449: "request", 450: "(none)", 10**12: "(none)"}
    rc, err, at, end, phases = dump_phases("nested.jsonl", want)
    check(rc == 0, f"nested phases: exit 0 ({err.strip()})")
    for t, g in want.items():
        check(at.get(t) == g, f"nested phases: at {t} -> {g} (got {at.get(t)})")
    check(end == {"phases": 4, "groups": 4, "bad_lines": 0, "unmatched_ends": 0, "unclosed": 0},
          f"nested phases: counts {end}")
    tokens = {p[0]: p[3] for p in phases}
    check(tokens.get("prefill") == "tokens=512" and tokens.get("decode") == "tokens=128"
          and tokens.get("load") == "tokens=-1", f"nested phases: tokens {tokens}")

    # Broken lines, an unmatched end, a phase never ended, lines out of time order, overlap.
    with open("messy.jsonl", "w") as f:
        f.write("\n".join([
            phase_line(40, "b", "end"),
            phase_line(10, "a", "begin"),
            "{not json",
            "[1, 2]",
            json.dumps({"t_ns": 15, "event": "begin"}),
            phase_line(16, "bad name", "begin"),
            phase_line(17, "x" * 65, "begin"),
            phase_line(18, "a", "middle"),
            json.dumps({"t_ns": -5, "name": "a", "event": "begin"}),
            phase_line(20, "b", "begin"),
            phase_line(30, "a", "end"),
            phase_line(35, "zzz", "end"),
            "",
            phase_line(60, "decode", "begin"),
            '{"t_ns": 70, "name": "decode", "ev',
        ]) + "\n")
    rc, err, at, end, phases = dump_phases("messy.jsonl", [5, 10, 25, 35, 45, 60, 10**15])
    check(rc == 0, f"messy phases: exit 0 ({err.strip()})")
    check(at == {5: "(none)", 10: "a", 25: "b", 35: "b", 45: "(none)", 60: "decode", 10**15: "decode"},
          f"messy phases: innermost {at}")
    check(end == {"phases": 3, "groups": 3, "bad_lines": 8, "unmatched_ends": 1, "unclosed": 1},
          f"messy phases: counts {end}")
    open_ones = [p for p in phases if "open=1" in p]
    check(len(open_ones) == 1 and open_ones[0][0] == "decode" and open_ones[0][2] == "60",
          f"messy phases: decode never ended, closes at the last boundary ({open_ones})")

    # Random boundary sequences against the brute-force model.
    rng = random.Random(11)
    for trial in range(20):
        events, out_lines = [], []
        for seq in range(rng.randint(1, 40)):
            t = rng.randrange(0, 1000)
            name = rng.choice("abcd")
            event = rng.choice(["begin", "begin", "end"])
            events.append((t, seq, name, event))
            out_lines.append(phase_line(t, name, event))
        path = f"random{trial}.jsonl"
        with open(path, "w") as f:
            f.write("\n".join(out_lines) + "\n")
        queries = sorted({rng.randrange(0, 1100) for _ in range(30)} | {e[0] for e in events})
        rc, err, at, end, _ = dump_phases(path, queries)
        bad = [(q, at.get(q), innermost_model(events, q)) for q in queries
               if at.get(q) != innermost_model(events, q)]
        check(rc == 0 and not bad, f"random phases {trial}: innermost disagrees at {bad[:5]}")

    open("empty.jsonl", "w").close()
    rc, err, at, end, _ = dump_phases("empty.jsonl", [5])
    check(rc == 0 and at.get(5) == "(none)" and end.get("phases") == 0, "empty phases: no phase, exit 0")
    with open("garbage.jsonl", "wb") as f:
        f.write(bytes(random.Random(3).randrange(256) for _ in range(4000)))
    expect_refused(["dump", "phases", "garbage.jsonl"], "garbage.jsonl", "no phase boundary", "garbage phases")
    expect_refused(["dump", "phases", "missing.jsonl"], "missing.jsonl", "No such file", "missing phases")


# ---------------------------------------------------------------- perfscope-report OUT

def group_samples_from_report(out):
    """{group: samples} from the report's phase-group table."""
    groups = {}
    in_table = False
    for line in out.splitlines():
        if line.startswith("phase groups"):
            in_table = True
            continue
        if in_table:
            if not line.strip():
                break
            parts = line.split()
            if parts[0] != "group":
                groups[parts[0]] = int(parts[4])
    return groups


def test_report():
    os.mkdir("run")
    rng = random.Random(5)
    # Two processes; one with a later exec image. Times cross the phases below.
    files = {"cpuprof.100.bin": [], "cpuprof.200.bin": [], "cpuprof.200.1.bin": []}
    all_times = []
    for name in files:
        for i in range(rng.randint(40, 80)):
            t = rng.randrange(0, 1000)
            tid = rng.choice([1, 2, 3])
            files[name].append((t, tid, f"worker-{tid}", [0x401000 + i]))
            all_times.append(t)
        sample_file(os.path.join("run", name), files[name])
    with open("run/cpuprof.100.maps", "w") as f:
        f.write("00400000-00500000 r-xp 00000000 fd:01 11 /usr/bin/engine\n")
    events = [(100, 0, "load", "begin"), (300, 1, "load", "end"), (300, 2, "decode", "begin"),
              (700, 3, "decode", "end"), (650, 4, "sample", "begin"), (690, 5, "sample", "end"),
              (800, 6, "decode", "begin")]
    with open("run/phases.jsonl", "w") as f:
        for t, _, name, event in sorted(events):
            f.write(phase_line(t, name, event, 64 if (name, event) == ("decode", "end") else None) + "\n")
    with open("run/counters.jsonl", "w") as f:
        for i, rss in enumerate([1000, 5000, 3000]):
            f.write(json.dumps({"t_ns": 100 * i, "rss_anon_kib": rss,
                                "rapl": [{"zone": "intel-rapl:0", "name": "package-0", "energy_uj": i},
                                         {"zone": "intel-rapl:0:0", "name": "core", "error": "EACCES"}],
                                "gpus": [{"index": 0}, {"index": 1}]}) + "\n")
        f.write('{"cut')
    with open("run/meta.json", "w") as f:
        json.dump({"schema": "perfscope-meta/1", "status": "exit 0", "t0_ns": 1,
                   "clock": {"in_use": "timer", "hz_delivered": 248.5}}, f)
    with open("run/perfscope.log", "w") as f:
        f.write("RAPL not readable: EACCES\nNVML absent\n")

    # The section-by-section view of the folder is `dump run`; `perfscope-report run` is the report.
    rc, out, err = run("run")
    check(rc == 0, f"report: exit 0 ({err.strip()})")
    check(os.path.exists("run/run.json") and os.path.exists("run/report.md"), "report: run.json, report.md")
    rc, out, err = run("dump", "run", "run")
    check(rc == 0, f"dump run: exit 0 ({err.strip()})")
    want = {}
    for t in all_times:
        g = innermost_model(events, t)
        want[g] = want.get(g, 0) + 1
    got = group_samples_from_report(out)
    check(got == want, f"report: samples per group {got} == {want}")
    for text in ["cpuprof.200.1.bin  pid 200 (exec 1)", "maps: 1 snapshot", "maps: missing",
                 "status: exit 0", "clock.in_use: timer", "clock.hz_delivered: 248.5",
                 "counters: 3 lines (1 bad lines skipped)", "RAPL zones: 2", "GPUs: 2",
                 "peak rss_anon: 5000 KiB", "NVML absent", "decode               begin",
                 "tokens=64", "1 phase never ended"]:
        check(text in out, f"report: shows {text!r}")
    for name, recs in files.items():
        for tid in (1, 2, 3):
            n = sum(1 for r in recs if r[1] == tid)
            if n:
                check(re.search(rf"tid {tid}\s+worker-{tid}\s+{n} samples", out) is not None,
                      f"report: {name} tid {tid} has {n} samples")

    # A cut sample file is used up to the cut, and said so.
    with open("run/cpuprof.100.bin", "r+b") as f:
        f.truncate(samples.HEADER.size + 10 * samples.record_size(8) + 5)
    rc, out, err = run("dump", "run", "run")
    check(rc == 0 and "ends mid-record" in out, f"report: cut sample file used ({err.strip()})")
    check(re.search(r"cpuprof.100.bin  pid 100  samples 10 ", out) is not None,
          "report: 10 records before the cut")

    # Bad input anywhere: exit 2 and one line naming the file, from the report and from dump run.
    for cmd in (["run"], ["dump", "run", "run"]):
        with open("run/cpuprof.300.bin", "wb") as f:
            f.write(b"\x00" * 100)
        expect_refused(cmd, "cpuprof.300.bin", "magic", "report: garbage sample file")
        open("run/cpuprof.300.bin", "wb").close()
        expect_refused(cmd, "cpuprof.300.bin", "empty", "report: empty sample file")
        os.remove("run/cpuprof.300.bin")
        with open("run/cpuprof.200.maps", "w") as f:
            f.write("garbage\n")
        expect_refused(cmd, "cpuprof.200.maps", "no mapping", "report: garbage maps")
        os.remove("run/cpuprof.200.maps")
        shutil.copy("run/meta.json", "meta.json.good")
        with open("run/meta.json", "w") as f:
            f.write('{"status": ')
        expect_refused(cmd, "meta.json", "JSON", "report: cut meta.json")
        shutil.copy("meta.json.good", "run/meta.json")
        expect_refused(cmd[:-1] + ["no-such-run"], "no-such-run", "No such file", "report: missing folder")
        os.makedirs("empty-run", exist_ok=True)
        expect_refused(cmd[:-1] + ["empty-run"], "empty-run", "no perfscope output", "report: empty folder")
        expect_refused(cmd[:-1] + ["good.bin"], "good.bin", "not a folder", "report: a file, not a folder")


def main():
    for test in (test_samples, test_maps, test_phases, test_report):
        test()
    finish()


if __name__ == "__main__":
    main()
