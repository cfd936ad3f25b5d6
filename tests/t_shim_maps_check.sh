#!/usr/bin/env bash
# t_shim_maps_check: a file mapped by a plain mmap (no library load for dl_iterate_phdr's
# counters to show) reaches the maps file while the process runs. The writer reads
# /proc/self/maps again only when the process's virtual size moved (checked once a second) or
# every 10 s, not at every check: t_mapfile burns 0.1 s (its sample files exist from its first
# samples), maps a 64 KiB file 1.2 s in, burns 0.1 s more, waits 2.5 s, exits.
# - its cpuprof.<pid>.maps has a "# t=" snapshot naming the file, in force from before the
#   exit line's time;
# - the first snapshot does not name it.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_mapfile

python3 - <<'EOF2'
import os, subprocess, time
import samples
from shimlib import *

path = os.path.abspath("mapped-by-mmap.bin")
with open(path, "wb") as f:
    f.write(b"\0" * 65536)
p = subprocess.Popen([target("t_mapfile"), path], env=shim_env("out", HZ=199), stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(1.2)
p.stdin.write(b"map\n")
p.stdin.flush()
time.sleep(2.5)
o, e = p.communicate(b"", timeout=30)
require(p.returncode == 0 and o == b"" and e == b"", "t_mapfile: exit %d, output %r %r" % (p.returncode, o, e[:300]))
files = samples.bin_files("out")
require(p.pid in files, "no sample files for t_mapfile: %s" % sorted(os.listdir("out")))
with open(files[p.pid][0][1] + ".maps") as f:
    text = f.read()
parts = text.split("\n# t=")
info("%d snapshot(s); the file named in %d" % (len(parts), sum(path in x for x in parts)))
check(path not in parts[0], "the first snapshot names the file mapped 1.2 s later")
check(len(parts) >= 2 and any(path in x for x in parts[1:]),
      "no later snapshot names %s, mapped 2.5 s before the exit (%d snapshots)" % (path, len(parts)))
finish()
EOF2
