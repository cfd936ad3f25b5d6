#!/usr/bin/env python3
"""bench/symbolize_gen.py OUT N [PATHS LEAVES]: writes a synthetic run folder for timing
perfscope-symbolize: N samples with 30-frame stacks over real libraries (libc, libstdc++, libm
and the bench target), mapped by a hand-written maps file, 8 threads, 3 phases.

Stacks: PATHS distinct call paths (29 caller frames each, return addresses drawn from the
libraries' functions), each ending in one of LEAVES instruction addresses of its leaf function:
PATHS x LEAVES distinct stacks, about 29 x PATHS + LEAVES x PATHS distinct addresses. A path runs
on one of the 8 threads (as code paths do: a worker's loop, the main thread's), every sample of a
stack in the phase of its time. The number of samples changes nothing but the counts, so memory
can be compared at equal distinct stacks.

The sample file format (and the ELF segments of the maps) is tests/samples.py's, the tests' one
Python copy of it."""
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import samples  # noqa: E402  (tests/samples.py)

FRAMES = 30


def functions(path):
    out = subprocess.run(["nm", "-D", "-S", "--defined-only", path], capture_output=True, text=True).stdout
    if not out.strip():
        out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True).stdout
    fns = []
    for l in out.splitlines():
        p = l.split()
        if len(p) == 4 and p[2] in "tTwWi" and int(p[1], 16) >= 16:
            fns.append((int(p[0], 16), int(p[1], 16)))
    return fns


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    paths = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    leaves = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    target = sys.argv[5] if len(sys.argv) > 5 else None
    libs = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
            "/usr/lib/x86_64-linux-gnu/libm.so.6"] + ([target] if target else [])
    libs = [os.path.realpath(l) for l in libs if os.path.exists(l)]
    rng = random.Random(1)
    os.makedirs(out, exist_ok=True)
    pid = 7777
    maps, pool = [], []
    base = 0x7f0000000000
    for lib in libs:
        ino = os.stat(lib).st_ino
        for off, vaddr, filesz, memsz, flags in samples.load_segments(lib):
            s, e = base + (vaddr & ~0xfff), base + ((vaddr + memsz + 0xfff) & ~0xfff)
            perms = ("r" if flags & 4 else "-") + ("w" if flags & 2 else "-") + ("x" if flags & 1 else "-") + "p"
            maps.append("%x-%x %s %08x fe:00 %d %s" % (s, e, perms, off & ~0xfff, ino, lib))
        pool += [(base + a, size) for a, size in functions(lib)]
        base += 0x100000000
    with open(os.path.join(out, "cpuprof.%d.maps" % pid), "w") as f:
        f.write("\n".join(maps) + "\n")
    # Distinct stacks: callers are return addresses inside functions, leaves any instruction.
    bodies = []
    for _ in range(paths):
        callers = [a + rng.randrange(4, size) for a, size in (rng.choice(pool) for _ in range(FRAMES - 1))]
        la, ls = rng.choice(pool)
        for _ in range(leaves):
            bodies.append(struct.pack("<%dQ" % FRAMES, la + rng.randrange(ls), *callers))
    t0 = 10 ** 12
    step = 1_000_000  # 1 ms of CPU a sample
    with open(os.path.join(out, "cpuprof.%d.bin" % pid), "wb") as f:
        f.write(samples.pack_header(n, 0, FRAMES, 1000))
        head = samples.RECORD_HEAD   # then the FRAMES frames, packed once per distinct stack
        comms = [("worker-%d" % k).encode() for k in range(8)]
        chunk = []
        for i in range(n):
            b = rng.randrange(len(bodies))
            k = (b // leaves) % 8
            chunk.append(head.pack(t0 + i * step // 8, 8000 + k, FRAMES, comms[k]))
            chunk.append(bodies[b])
            if len(chunk) >= 20000:
                f.write(b"".join(chunk))
                chunk = []
        f.write(b"".join(chunk))
    end = t0 + n * step // 8
    with open(os.path.join(out, "phases.jsonl"), "w") as f:
        third = (end - t0) // 3
        for k, name in enumerate(("load", "prefill", "decode")):
            f.write('{"t_ns":%d,"name":"%s","event":"begin"}\n' % (t0 + k * third, name))
            f.write('{"t_ns":%d,"name":"%s","event":"end","tokens":%d}\n' % (t0 + (k + 1) * third, name, 100))
    print("%s: %d samples, %d distinct stacks, %d libraries" % (out, n, len(bodies), len(libs)))


main()
