"""bench/readers.py: count the samples a profiler wrote, for make bench.

perfscope: OUT/cpuprof.<pid>[.<n>].bin (docs/formats.md). A tick-timer record may be written
1 + si_overrun times, so what counts is the distinct (tid, time_ns) pairs.
gperftools: the legacy CPU profile (docs/cpuprofile-fileformat): 8-byte slots, header
[0, 3, 0, period_us, 0], records [count, npcs, pc...], trailer [0, 1, 0]; each record's
count is the number of samples with that stack.
"""
import glob
import json
import os
import struct

PS_MAGIC = 0x4C5053434F504531


def perfscope_times(out_dir):
    """-> {tid: sorted distinct time_ns} of every .bin under out_dir."""
    by_tid = {}
    for tid, t_ns in _perfscope_records(out_dir, [0, 0]):
        by_tid.setdefault(tid, set()).add(t_ns)
    return {tid: sorted(v) for tid, v in by_tid.items()}


def _perfscope_records(out_dir, counts):
    """(tid, time_ns) of each whole record; counts[0] += records, counts[1] += dropped."""
    for path in sorted(glob.glob(os.path.join(out_dir, "cpuprof.*.bin"))):
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 40:
            continue
        magic, count, drop, max_frames, _hz = struct.unpack_from("<5Q", data, 0)
        if magic != PS_MAGIC:
            raise ValueError("%s: bad magic %#x" % (path, magic))
        counts[1] += drop
        size = 32 + 8 * max_frames
        # a file may end mid-record (flushed while running): read whole records only
        n = min(count, (len(data) - 40) // size)
        for i in range(n):
            t_ns, tid = struct.unpack_from("<QI", data, 40 + i * size)
            yield tid, t_ns
        counts[0] += n


def perfscope_samples(out_dir):
    """-> dict(distinct, records, dropped, clock, delivery) for every .bin under out_dir."""
    counts = [0, 0]
    seen = set(_perfscope_records(out_dir, counts))
    records, dropped = counts
    meta = {}
    try:
        with open(os.path.join(out_dir, "meta.json")) as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
        meta = json.loads(lines[-1]) if lines else {}
    except (OSError, ValueError):
        pass
    s = meta.get("sampling", {})
    return {"distinct": len(seen), "records": records, "dropped": dropped,
            "clock": s.get("clock", "?"), "delivery": s.get("perf_delivery", ""),
            "hz_delivered": s.get("hz_delivered"), "sampled_cpu_s": s.get("sampled_cpu_s"),
            "shim_threads_cpu_s": s.get("shim_threads_cpu_s"),
            "shim_threads_wakeups": s.get("shim_threads_wakeups")}


def gperftools_samples(path):
    """-> dict(distinct, records, dropped, period_us) from a gperftools CPU profile."""
    with open(path, "rb") as f:
        data = f.read()
    nslots = len(data) // 8
    w = struct.unpack_from("<%dQ" % nslots, data, 0)
    if nslots < 5 or w[0] != 0 or w[1] < 3 or w[2] != 0:
        raise ValueError("%s: not a gperftools CPU profile" % path)
    i = 2 + w[1]
    period_us = w[3]
    total = nrec = 0
    while i + 2 <= nslots:
        count, npcs = w[i], w[i + 1]
        if count == 0 and npcs == 1 and i + 2 < nslots and w[i + 2] == 0:
            break  # trailer
        total += count
        nrec += 1
        i += 2 + npcs
    return {"distinct": total, "records": nrec, "dropped": 0, "period_us": period_us}
