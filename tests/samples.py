"""samples.py: the one Python copy of the formats the shim writes, for the tests and the benches
(python3, standard library only): readers for every file of a run folder, and writers of sample
files (synthetic and hostile ones, for the tools' tests and bench/symbolize_gen.py).

Formats (docs/formats.md):
- cpuprof.<pid>[.<n>].bin: 40-byte header (u64 magic, count, dropped, max_frames, hz), then
  records of 32 + 8*max_frames bytes (u64 time_ns CLOCK_MONOTONIC, u32 tid, u32 nframes,
  char comm[16], u64 frames[max_frames]), little endian, no padding. A file may end mid-record.
- cpuprof.<pid>[.<n>].maps: the text of /proc/PID/maps; each later snapshot starts with "# t=<ns>".
- phases.jsonl, counters.jsonl, procs.jsonl: one JSON object a line; meta.json: one object.
Also the PT_LOAD segments and function symbols of an ELF file (what a maps file maps).
The checks' convention (check, require, ...) is tests/checks.py's, not this file's.
"""
import bisect
import json
import os
import re
import struct
import subprocess

MAGIC = 0x4c5053434f504531
HEADER = struct.Struct("<5Q")           # magic, count, dropped, max_frames, hz
RECORD_HEAD = struct.Struct("<QII16s")  # time_ns, tid, nframes, comm; then max_frames u64 frames
BIN_RE = re.compile(r"^cpuprof\.(\d+)(?:\.(\d+))?\.bin$")


class Sample:
    __slots__ = ("t", "tid", "comm", "frames")

    def __init__(self, t, tid, comm, frames):
        self.t, self.tid, self.comm, self.frames = t, tid, comm, frames

    def __repr__(self):
        return "Sample(t=%d, tid=%d, comm=%r, frames=[%s])" % (
            self.t, self.tid, self.comm, ", ".join("%#x" % f for f in self.frames[:4]))


class SampleFile:
    """One cpuprof .bin file: header fields, the samples, and whether it ended mid-record."""

    def __init__(self, path, beyond_count=False):
        self.path = path
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < HEADER.size:
            raise ValueError("%s: %d bytes, shorter than the 40-byte header" % (path, len(data)))
        self.magic, self.count, self.dropped, self.max_frames, self.hz = HEADER.unpack_from(data, 0)
        if self.magic != MAGIC:
            raise ValueError("%s: bad magic %#x" % (path, self.magic))
        if not 1 <= self.max_frames <= 256:
            raise ValueError("%s: max_frames %d outside 1..256" % (path, self.max_frames))
        self.record_size = record_size(self.max_frames)
        body = len(data) - HEADER.size
        self.records_in_file = body // self.record_size
        self.partial_tail = body % self.record_size  # bytes of a record cut short
        n = self.records_in_file if beyond_count else min(self.count, self.records_in_file)
        self.truncated = self.records_in_file < self.count
        rec = struct.Struct("<QII16s%dQ" % self.max_frames)
        self.samples = []
        for i in range(n):
            v = rec.unpack_from(data, HEADER.size + i * self.record_size)
            t, tid, nframes, comm = v[0], v[1], v[2], v[3]
            if nframes > self.max_frames:
                raise ValueError("%s: record %d has nframes %d > max_frames %d"
                                 % (path, i, nframes, self.max_frames))
            name = comm.split(b"\0", 1)[0].decode("utf-8", "replace")
            self.samples.append(Sample(t, tid, name, list(v[4:4 + nframes])))


def read_samples(path, beyond_count=False):
    return SampleFile(path, beyond_count)


def record_size(max_frames):
    return RECORD_HEAD.size + 8 * max_frames


def pack_header(count, dropped, max_frames, hz, magic=MAGIC):
    return HEADER.pack(magic, count, dropped, max_frames, hz)


def pack_record(t, tid, comm, frames, max_frames, nframes=None):
    """One record of a file of max_frames frames: `frames` cut or padded with zeros to it, comm
    (str or bytes) cut to 16 bytes; nframes len(frames) unless given (a hostile file's lie)."""
    nframes = len(frames) if nframes is None else nframes
    fr = list(frames[:max_frames]) + [0] * (max_frames - min(len(frames), max_frames))
    comm = comm.encode() if isinstance(comm, str) else comm
    return RECORD_HEAD.pack(t, tid, nframes, comm[:16]) + struct.pack("<%dQ" % max_frames, *fr)


def write_samples(path, records, max_frames, count=None, dropped=0, hz=1000, tail=b"", cut=0):
    """A sample file of `records` [(t, tid, comm, frames)]: the header (count: len(records) unless
    given), the records, then `tail`; the last `cut` bytes left off."""
    data = pack_header(len(records) if count is None else count, dropped, max_frames, hz)
    data += b"".join(pack_record(*r, max_frames=max_frames) for r in records) + tail
    with open(path, "wb") as f:
        f.write(data[:-cut] if cut else data)


def reference_read_samples(path):
    """The reference harness's reader (cpuprof.py _read_samples), reimplemented from its logic:
    unpack the five header words, refuse a wrong magic, then read up to `count` records of
    32 + 8*max_frames bytes, stopping at the first short read; each record gives
    (time, tid, name up to the first NUL decoded with replacement, the first nframes frames).
    Returns (samples, dropped, hz)."""
    out = []
    with open(path, "rb") as f:
        head = f.read(40)
        words = struct.unpack("<QQQQQ", head)
        if words[0] != MAGIC:
            raise ValueError("not a llmperfscope CPU profile")
        count, dropped, max_frames, hz = words[1], words[2], words[3], words[4]
        size = 32 + 8 * max_frames
        fmt = "<QII16s" + str(max_frames) + "Q"
        n = 0
        while n < count:
            chunk = f.read(size)
            if len(chunk) != size:
                break
            fields = struct.unpack(fmt, chunk)
            name = fields[3].partition(b"\0")[0].decode("utf-8", "replace")
            out.append((fields[0], fields[1], name, fields[4:4 + fields[2]]))
            n += 1
    return out, dropped, hz


def check_reference_reader(path):
    """A check (tests/checks.py require: the checker stops on a failure) that the reference
    reader's logic reads `path` exactly as we do; returns the number of samples read."""
    from checks import require
    ours = SampleFile(path)
    theirs, dropped, hz = reference_read_samples(path)
    require(dropped == ours.dropped and hz == ours.hz, "%s: header differs" % path)
    require(len(theirs) == len(ours.samples), "%s: reference reads %d samples, we read %d" % (
        path, len(theirs), len(ours.samples)))
    differ = [(a, b) for a, b in zip(theirs, ours.samples)
              if (a[0], a[1], a[2], list(a[3])) != (b.t, b.tid, b.comm, b.frames)]
    require(not differ, "%s: reference reads %r, we read %r" % ((path,) + (differ[0] if differ else (None, None))))
    return len(theirs)


# ---- maps --------------------------------------------------------------------------------------

class Mapping:
    __slots__ = ("start", "end", "perms", "offset", "path")

    def __init__(self, start, end, perms, offset, path):
        self.start, self.end, self.perms, self.offset, self.path = start, end, perms, offset, path

    def __repr__(self):
        return "%x-%x %s %x %s" % (self.start, self.end, self.perms, self.offset, self.path)


def read_maps(path):
    """[(t_ns, [Mapping sorted by start])]: the first snapshot has t_ns 0 (in force from the start),
    each later one the t of its '# t=<ns>' line. Raises ValueError on a line that is neither."""
    snaps = [(0, [])]
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                m = re.match(r"^# t=(\d+)\s*$", line)
                if not m:
                    raise ValueError("%s:%d: bad snapshot line %r" % (path, lineno, line))
                snaps.append((int(m.group(1)), []))
                continue
            parts = line.split(None, 5)
            if len(parts) < 5 or "-" not in parts[0]:
                raise ValueError("%s:%d: not a maps line: %r" % (path, lineno, line))
            a, b = parts[0].split("-")
            snaps[-1][1].append(Mapping(int(a, 16), int(b, 16), parts[1], int(parts[2], 16),
                                        parts[5].strip() if len(parts) == 6 else ""))
    for _, maps in snaps:
        maps.sort(key=lambda m: m.start)
    if not snaps[0][1] and len(snaps) == 1:
        raise ValueError("%s: no mappings" % path)
    return snaps


def snapshot_at(snaps, t):
    """The snapshot in force at time t: the last one whose t_ns <= t."""
    best = snaps[0][1]
    for ts, maps in snaps:
        if ts <= t:
            best = maps
    return best


def find_mapping(maps, addr):
    starts = [m.start for m in maps]
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and maps[i].start <= addr < maps[i].end:
        return maps[i]
    return None


# ---- ELF files: segments and symbols (nm) -------------------------------------------------------

def load_segments(path):
    """[(offset, vaddr, filesz, memsz, flags)] of the PT_LOAD program headers of a 64-bit ELF file."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff = struct.unpack_from("<Q", head, 32)[0]
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        tab = f.read(phentsize * phnum)
    segs = []
    for i in range(phnum):
        ptype, flags, off, vaddr, _, filesz, memsz = struct.unpack_from("<IIQQQQQ", tab, i * phentsize)
        if ptype == 1:
            segs.append((off, vaddr, filesz, memsz, flags))
    return segs


def symbols(path):
    """{name: (value, size)} of the defined function symbols of an ELF file, from nm -S."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW":
            syms[p[3]] = (int(p[0], 16), int(p[1], 16))
    return syms


def runtime_ranges(path, anchor_name, anchor_addr, names):
    """{name: (start, end)} at run time, given one symbol's run-time address (the load bias)."""
    syms = symbols(path)
    bias = anchor_addr - syms[anchor_name][0]
    return {n: (syms[n][0] + bias, syms[n][0] + bias + syms[n][1]) for n in names}


def file_ranges(snaps_maps, exe):
    """Executable mappings of file `exe` (compared by real path) in one snapshot."""
    real = os.path.realpath(exe)
    return [m for m in snaps_maps if "x" in m.perms and m.path and
            os.path.realpath(m.path.replace(" (deleted)", "")) == real]


# ---- JSON files --------------------------------------------------------------------------------

def read_jsonl(path):
    """Every line one JSON object; a blank last line is allowed, nothing else."""
    rows = []
    with open(path) as f:
        text = f.read()
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise ValueError("%s:%d: not JSON (%s): %r" % (path, lineno, e, line[:200]))
        if not isinstance(obj, dict):
            raise ValueError("%s:%d: not a JSON object" % (path, lineno))
        rows.append(obj)
    if text and not text.endswith("\n"):
        raise ValueError("%s: last line has no newline" % path)
    return rows


def read_phases(path):
    """phases.jsonl, checked: t_ns int, name str, event begin|end, source file|api, attrs dict."""
    rows = read_jsonl(path)
    for i, r in enumerate(rows, 1):
        for key, typ in (("t_ns", int), ("name", str), ("event", str), ("source", str)):
            if not isinstance(r.get(key), typ):
                raise ValueError("%s:%d: %s missing or not %s: %r" % (path, i, key, typ.__name__, r))
        if r["event"] not in ("begin", "end"):
            raise ValueError("%s:%d: event %r" % (path, i, r["event"]))
        if r["source"] not in ("file", "api"):
            raise ValueError("%s:%d: source %r" % (path, i, r["source"]))
        if not isinstance(r.get("attrs", {}), dict):
            raise ValueError("%s:%d: attrs not an object" % (path, i))
        r.setdefault("attrs", {})
    return rows


def read_meta(path):
    with open(path) as f:
        obj = json.load(f)
    if not isinstance(obj, dict):
        raise ValueError("%s: not a JSON object" % path)
    return obj


def leaves(obj, prefix=""):
    """(dotted key path, value) for every scalar in a JSON value."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, prefix + "." + str(k) if prefix else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, "%s[%d]" % (prefix, i))
    else:
        yield prefix, obj


def intervals(phases):
    """[(name, begin_t, end_t, depth)] pairing each end with the latest open begin of its name."""
    open_ = {}
    out = []
    depth = 0
    for r in sorted(phases, key=lambda r: r["t_ns"]):
        if r["event"] == "begin":
            open_.setdefault(r["name"], []).append((r["t_ns"], depth))
            depth += 1
        elif open_.get(r["name"]):
            t0, d = open_[r["name"]].pop()
            depth -= 1
            out.append((r["name"], t0, r["t_ns"], d))
    return out


# ---- a run folder ------------------------------------------------------------------------------

def bin_files(out_dir):
    """{pid: [(n, path_without_suffix)]}, n = 0 for cpuprof.<pid>.bin, sorted by n."""
    files = {}
    for name in os.listdir(out_dir):
        m = BIN_RE.match(name)
        if m:
            pid, n = int(m.group(1)), int(m.group(2) or 0)
            files.setdefault(pid, []).append((n, os.path.join(out_dir, name[:-4])))
    for v in files.values():
        v.sort()
    return files
