#!/usr/bin/env bash
# t_shim_runfolder: a run folder is one run (issue 8, defect 10; docs/shim.md). tests/targets/
# e_runfolder.c starts processes in a folder; checks:
# - one run with a tree of processes (posix_spawn children, and one whose environment was
#   scrubbed of PERFSCOPE_RUN_ID: it joins the run in progress): every process recorded, one
#   run id in meta.json, .leader and the environment, nothing on stderr;
# - the same command again into the folder of that finished run: its status, stdout and stderr
#   as without the shim but for one line on stderr for the whole process tree ("... holds an
#   earlier run ..."), and not one byte of the folder changed;
# - into the folder of a run killed with SIGKILL (meta.json still says running, no process
#   left): refused the same way;
# - while a run is in progress: a process with another run's PERFSCOPE_RUN_ID is refused, one
#   with none joins (it cannot be told from a descendant whose environment was scrubbed);
# - an unusable folder: one line on stderr for a whole tree of processes and exec'd images.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target e_runfolder
build_target t_idle

python3 - <<'EOF2'
import hashlib, json, os, re, signal, subprocess, time
import samples
from shimlib import *

exe = target("e_runfolder")


def snapshot(d):
    """{name: sha256} of every file in d."""
    return {n: hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest() for n in sorted(os.listdir(d))}


def starts(d):
    return [r for r in samples.read_jsonl(os.path.join(d, "procs.jsonl")) if r.get("event") == "start"]


def refusal(res, d, what):
    lines = res.stderr.decode("utf-8", "replace").splitlines()
    check(len(lines) == 1 and re.match(r"^perfscope: %s holds %s" % (re.escape(os.path.abspath(d)), what), lines[0]),
          "stderr %r: want one line 'perfscope: %s holds %s ...'" % (lines, os.path.abspath(d), what))


base = run([exe, "tree", "2"], plain_env(), what="e_runfolder tree 2 without the shim")
expect_ok(base, "e_runfolder tree 2 without the shim")

# One run: a tree, and a child whose environment lost PERFSCOPE_RUN_ID.
res = run([exe, "tree", "2"], shim_env("out", HZ=199), what="e_runfolder tree 2")
expect_ok(res, "e_runfolder tree 2")
check(res.stdout == base.stdout and res.stderr == b"", "first run: output %r %r" % (res.stdout, res.stderr))
check(len(starts("out")) == 3, "first run: %d processes started, want 3" % len(starts("out")))
meta = json.load(open("out/meta.json"))
run_id = meta.get("run_id", "")
check(re.match(r"^\d+-[0-9a-f]+-[0-9a-f]{8}$", run_id), "meta.json's run_id %r" % run_id)
check(("run=%s" % run_id) in open("out/.leader").read(), ".leader %r does not name run %s" % (open("out/.leader").read(), run_id))
check(meta.get("status") == "ok", "first run: status %r" % meta.get("status"))
res = run([exe, "scrubbed"], shim_env("out-scrubbed", HZ=199), what="e_runfolder scrubbed")
expect_ok(res, "e_runfolder scrubbed")
check(res.stdout == b"burn done\nscrubbed done\n" and res.stderr == b"",
      "scrubbed: output %r %r (the child must join the run in progress)" % (res.stdout, res.stderr))
check(len(starts("out-scrubbed")) == 2, "scrubbed: %d processes started, want 2" % len(starts("out-scrubbed")))

# The same command again into the finished run's folder.
before = snapshot("out")
res = run([exe, "tree", "2"], shim_env("out", HZ=199), what="e_runfolder tree 2, second time")
check(res.rc == base.rc and res.stdout == base.stdout, "second run: rc %r stdout %r, without the shim %r %r"
      % (res.rc, res.stdout, base.rc, base.stdout))
refusal(res, "out", r"an earlier run that has ended \(status ok\)")
after = snapshot("out")
check(after == before, "second run changed the folder: %s" % sorted(
    set(n for n in set(before) | set(after) if before.get(n) != after.get(n))))

# A killed run's folder.
p = subprocess.Popen([target("t_idle")], env=shim_env("out-killed", HZ=199), stdin=subprocess.PIPE)
deadline = time.monotonic() + 10
while not os.path.exists("out-killed/meta.json") and time.monotonic() < deadline:
    time.sleep(0.02)
os.kill(p.pid, signal.SIGKILL)
p.wait()
check(json.load(open("out-killed/meta.json")).get("status") == "running", "the killed run's status is not running")
before = snapshot("out-killed")
res = run([exe, "burn"], shim_env("out-killed", HZ=199), what="e_runfolder burn into a killed run")
check(res.rc == 0 and res.stdout == b"burn done\n", "into the killed run: rc %r stdout %r" % (res.rc, res.stdout))
refusal(res, "out-killed", r"an earlier run whose processes are all gone")
check(snapshot("out-killed") == before, "the process refused changed the killed run's folder")

# A run in progress: another run's id is refused, no id joins.
p = subprocess.Popen([target("t_idle")], env=shim_env("out-live", HZ=199), stdin=subprocess.PIPE)
deadline = time.monotonic() + 10
while not os.path.exists("out-live/.leader") and time.monotonic() < deadline:
    time.sleep(0.02)
try:
    time.sleep(0.1)
    res = run([exe, "burn"], shim_env("out-live", HZ=199, PERFSCOPE_RUN_ID="1-2-00000003"), what="another run's id")
    check(res.rc == 0 and res.stdout == b"burn done\n", "another run's id: rc %r stdout %r" % (res.rc, res.stdout))
    refusal(res, "out-live", r"another run \(run \d+-[0-9a-f]+-[0-9a-f]{8}, status")
    n = len(starts("out-live"))
    res = run([exe, "burn"], shim_env("out-live", HZ=199), what="no run id, a run in progress")
    check(res.rc == 0 and res.stdout == b"burn done\n" and res.stderr == b"",
          "no run id, a run in progress: rc %r %r %r" % (res.rc, res.stdout, res.stderr))
    check(len(starts("out-live")) == n + 1, "no run id, a run in progress: not recorded (%d starts, want %d)"
          % (len(starts("out-live")), n + 1))
finally:
    p.communicate(b"", timeout=30)
check(p.returncode == 0, "t_idle: exit status %r" % p.returncode)

# An unusable folder (under a regular file: it cannot be made) for a tree of processes, images
# exec'd one after another among them: one line on stderr for the whole tree, and the output as
# without the shim (a transparency review: one line per image before, 36 for one python3).
with open("a-file", "w") as f:
    f.write("x")
tree = ["sh", "-c", 'echo one; sh -c "echo two; exec sh -c \'echo three\'"; /bin/true; echo four']
base = run(tree, plain_env(), what="a tree of processes")
res = run(tree, shim_env(os.path.abspath("a-file/out"), HZ=199), what="a tree of processes, an unusable folder")
lines = res.stderr.splitlines()
check(res.rc == base.rc == 0 and res.stdout == base.stdout == b"one\ntwo\nthree\nfour\n",
      "an unusable folder: rc %r stdout %r (without: %r %r)" % (res.rc, res.stdout, base.rc, base.stdout))
check(len(lines) == 1 and b"cannot use the output folder" in lines[0],
      "an unusable folder: one line on stderr for the tree, got %r" % lines)
finish()
EOF2
