#!/usr/bin/env bash
# t_tools_record: `perfscope record` (docs/record.md) with $TOOLS/perfscope:
# - a bad option value: exit 2, one line on stderr, nothing run, no folder made;
# - the command's exit status and stdout byte for byte (binary bytes, no newline at the end),
#   its stdin its own; 128+N when it died of signal N; 127 for a command not found, 126 for one
#   that cannot be run;
# - OUT.old rotation (an older .old removed, never a run recorded into an earlier one; a folder a
#   live run records into refused, as OUT or OUT.old); an OUT
#   or OUT.old that is not a run folder (a user's folder, a file) never renamed nor removed: the
#   run refused; an empty folder used; missing parents made;
# - the markers file under both names (LLMPERFSCOPE_MARKERS and PERFSCOPE_MARKERS);
# - a phase too short for the periodic memory readings is named as such in the report;
# - SIGINT to record reaches the command, which decides (f_sigint3 catches it and exits 3); a
#   Ctrl-C on a terminal (a pty) reaches it once, not a second time forwarded;
# - launcher.json: wait4's status, rusage, start and end on the caller's CLOCK_MONOTONIC;
# - a raw exit_group: meta.json still says running, launcher.json and the report say exit 5;
# - a static executable, a setuid file of another user, each said in one line, and it still runs;
#   root's own setuid file is not (ld.so loads the shim there).
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope
build_target f_sigint3
build_target f_exitgroup
build_target t_burn
build_target t_exit
build_target f_sigcount
# The sanitizer build's tools have no shim beside them: they use the normal build's.
[ -f "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
static=
if echo 'int main(void){return 4;}' | ${CC:-gcc} -static -x c -o "$TBUILD/f_static" - 2>/dev/null; then
  static=$TBUILD/f_static
fi

# A setuid file of another user (root only can make one): ld.so ignores LD_PRELOAD in it.
suid=
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  build_target r_exitcode
  mkdir -p suid && cp "$TBUILD/r_exitcode" suid/r_exitcode && chmod 755 suid && chown nobody suid/r_exitcode \
    && chmod 4755 suid/r_exitcode && suid=$PWD/suid/r_exitcode
fi

py_check record - "$TOOL" "$static" "$suid" <<'EOF2'
import json, os, signal, subprocess, sys, time
from shimlib import *

tool, static, suid = sys.argv[1], sys.argv[2], sys.argv[3]
env = plain_env()
if "PERFSCOPE_SHIM" in os.environ:
    env["PERFSCOPE_SHIM"] = os.environ["PERFSCOPE_SHIM"]


def rec(args, stdin=None, e=None):
    return run([tool, "record"] + args, e or env, timeout=120, stdin=stdin, what="perfscope record")


def launcher(d):
    return json.load(open(os.path.join(d, "launcher.json")))


# Bad values: exit 2, one line, nothing run.
for args, why in [(["-F", "abc"], "-F abc"), (["-F", "-5"], "-F -5"), (["--clock", "tsc"], "--clock tsc"),
                  (["--unwind", "dwarf"], "--unwind dwarf"), (["--bogus"], "unknown option"), ([], "no command")]:
    r = rec(["-o", "bad"] + args + (["--", "touch", "ran"] if args != [] else []))
    lines = r.stderr.decode().splitlines()
    check(r.rc == 2, "record %s: exit %d, expected 2" % (args, r.rc))
    check(len(lines) == 1 and why in lines[0], "record %s: stderr %r, expected one line naming %r" % (args, lines, why))
    check(not os.path.exists("ran") and not os.path.exists("bad"), "record %s: something ran or bad/ was made" % args)

# Exit status and stdout byte for byte; stdin is the command's. (No redirection inside the sh
# script: a shell's dup2 can race with the shim's own open() in its leader thread, EBUSY, which
# is the shim's matter, not record's.)
script = r'printf "a\000b\377\n"; head -c 3; printf "tail"; exit 7'
direct = run(["sh", "-c", script], env, stdin=b"xyz-rest", what="sh")
r = rec(["-o", "o1", "--", "sh", "-c", script], stdin=b"xyz-rest")
check(r.rc == 7, "record sh ... exit 7: exit %d" % r.rc)
check(direct.stdout == b"a\x00b\xff\nxyztail", "the command's own stdout: %r" % direct.stdout)
check(r.stdout == direct.stdout, "record's stdout %r is not the command's %r" % (r.stdout, direct.stdout))
err = r.stderr.decode("utf-8", "replace")
check("perfscope record: " in err and "-> o1" in err, "the summary line: %r" % err[:400])
check("## Phases" in err, "the short report on stderr: %r" % err[:400])
# A C target's stdout (100 KiB, a last line without newline) and stderr, both its own.
direct = run([target("t_exit"), "exit", "9"], env, what="t_exit")
r = rec(["-o", "o3", "--no-report", "--", target("t_exit"), "exit", "9"])
check(r.rc == 9 and direct.rc == 9, "t_exit exit 9: record %d, direct %d" % (r.rc, direct.rc))
check(len(direct.stdout) > 100000 and r.stdout == direct.stdout, "t_exit's stdout through record: %d bytes, %s" %
      (len(r.stdout), "same" if r.stdout == direct.stdout else "different"))
check(r.stderr.startswith(direct.stderr) and r.stderr[len(direct.stderr):].startswith(b"perfscope record: "),
      "t_exit's stderr first, then record's line: %r" % r.stderr[-300:])
lj = launcher("o1")
check(lj.get("status") == "exit 7" and lj.get("exit_code") == 7 and lj.get("signal") is None,
      "launcher.json exit 7: %r" % {k: lj.get(k) for k in ("status", "exit_code", "signal")})
check(lj.get("wait_status") == 7 << 8, "launcher.json wait_status %r, expected %d" % (lj.get("wait_status"), 7 << 8))
check(os.path.isfile("o1/meta.json"), "o1/meta.json: the command ran under the shim")

# --no-report: the summary line only; died of a signal: 128+N.
r = rec(["-o", "o2", "--no-report", "--", "sh", "-c", "kill -TERM $$"])
check(r.rc == 128 + signal.SIGTERM, "a command killed by SIGTERM: exit %d, expected %d" % (r.rc, 128 + signal.SIGTERM))
lj = launcher("o2")
check(lj.get("status") == "signal SIGTERM" and lj.get("signal") == signal.SIGTERM and lj.get("exit_code") is None,
      "launcher.json for SIGTERM: %r" % {k: lj.get(k) for k in ("status", "exit_code", "signal")})
err = r.stderr.decode()
check("## Phases" not in err and len(err.splitlines()) == 1, "--no-report: one line on stderr, got %r" % err)
check(not os.path.exists("o2/report.md"), "--no-report: no report.md")

# A command that cannot be run: 127 when not found, 126 when found but not executable (as the
# shell and env(1) say; a newcomer's run found 127 for both).
with open("noexec.sh", "w") as f:
    f.write("#!/bin/sh\necho hi\n")
os.chmod("noexec.sh", 0o644)
for cmd, want in ((os.path.abspath("noexec.sh"), 126), (os.path.abspath("no-such-command"), 127)):
    r = rec(["-o", "o-cannot", "--no-report", "--", cmd])
    check(r.rc == want and b"cannot run" in r.stderr, "record -- %s: exit %d (expected %d), stderr %r" % (cmd, r.rc, want, r.stderr[-300:]))

# A rate above what a signal a sample keeps up with is taken as PS_HZ_MAX (20000), said in
# perfscope.log: at 100000 a newcomer's 0.14 s program took 22 CPU s.
r = rec(["-o", "o-fast", "-F", "100000", "--no-report", "--", "sh", "-c", "exit 0"])
meta = json.load(open("o-fast/meta.json")) if os.path.exists("o-fast/meta.json") else {}
log = open("o-fast/perfscope.log").read() if os.path.exists("o-fast/perfscope.log") else ""
check(r.rc == 0 and meta.get("config", {}).get("hz") == 20000 and "PERFSCOPE_HZ=100000" in log and "20000 Hz used" in log,
      "-F 100000: exit %d, meta.json hz %r, log %r" % (r.rc, meta.get("config", {}).get("hz"), log[-400:]))

# Rotation: OUT -> OUT.old, an older OUT.old removed.
for i in range(3):
    r = rec(["-o", "rot", "--no-report", "--", "sh", "-c", "exit 0", "run%d" % i])
    check(r.rc == 0, "rotation run %d: exit %d" % (i, r.rc))
    open("rot/stray-%d" % i, "w").close()
check(os.path.isfile("rot/stray-2") and not os.path.exists("rot/stray-1"), "rot/ is the third run alone: %s" % sorted(os.listdir("rot")))
check(os.path.isfile("rot.old/stray-1") and not os.path.exists("rot.old/stray-0"), "rot.old/ is the second run alone: %s" % sorted(os.listdir("rot.old")))
check(launcher("rot")["command"][-1] == "run2" and launcher("rot.old")["command"][-1] == "run1",
      "rot/ holds run 3, rot.old/ run 2")
check(not os.path.exists("rot.old.old"), "no rot.old.old")

# A folder a live run still records into is neither moved aside nor removed (as OUT or OUT.old):
# the second record is refused (exit 2, one line), the first run's folder stays whole; once that
# run has ended, a record into it rotates as before.
first = subprocess.Popen([tool, "record", "-o", "busy", "--no-report", "--", "sh", "-c", "sleep 3; exit 4"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if os.path.exists("busy/meta.json"):
        break
    time.sleep(0.05)
r = rec(["-o", "busy", "--no-report", "--", "sh", "-c", "exit 0"])
err = r.stderr.decode()
check(r.rc == 2 and "still recording" in err and len(err.splitlines()) == 1 and not os.path.exists("busy.old"),
      "record into a folder a live run records into: exit %d, %r, busy.old there: %s" % (r.rc, err, os.path.exists("busy.old")))
first.wait(timeout=60)
check(first.returncode == 4 and launcher("busy")["command"][-1] == "sleep 3; exit 4",
      "the first run ended as it would (exit %r) with its folder its own" % first.returncode)
r = rec(["-o", "busy", "--no-report", "--", "sh", "-c", "exit 0"])
check(r.rc == 0 and os.path.isdir("busy.old"), "after the first run's end, record rotates: exit %d" % r.rc)

# The markers file under both names, so a script appending to either finds it; the caller's wins.
env_mk = {k: v for k, v in env.items() if k not in ("LLMPERFSCOPE_MARKERS", "PERFSCOPE_MARKERS")}
r = rec(["-o", "mk", "--no-report", "--", "sh", "-c", 'printf "%s|%s" "$LLMPERFSCOPE_MARKERS" "$PERFSCOPE_MARKERS"'],
        e=env_mk)
check(r.rc == 0 and r.stdout.decode() == "%s|%s" % ((os.path.abspath("mk/markers"),) * 2),
      "the command sees LLMPERFSCOPE_MARKERS and PERFSCOPE_MARKERS, both OUT/markers: %r" % r.stdout)
e2 = dict(env_mk, PERFSCOPE_MARKERS="/tmp/elsewhere.markers")
r = rec(["-o", "mk", "--no-report", "--", "sh", "-c", 'printf "%s|%s" "$LLMPERFSCOPE_MARKERS" "$PERFSCOPE_MARKERS"'], e=e2)
check(r.rc == 0 and r.stdout.decode() == "/tmp/elsewhere.markers|/tmp/elsewhere.markers",
      "the caller's PERFSCOPE_MARKERS is the file under both names: %r" % r.stdout)

# A marker script recorded into OUT under sh (P: the perfscope tool, B: t_burn), then its report:
# whether both exited 0, and the report's lines.
def marked_report(out, script):
    r = rec(["-o", out, "--no-report", "--", "sh", "-c", script], e=dict(env_mk, P=tool, B=target("t_burn")))
    rep = run([tool, "report", out], env, timeout=120, what="perfscope report")
    return r.rc == 0 and rep.rc == 0, rep.stdout.decode().splitlines()


def starting(lines, prefix):
    return [l for l in lines if l.startswith(prefix)]


# A phase of a few counter periods or less: its host memory peak rests on the readings at its
# boundaries and one or two between them, and the report says so (a 0.12 s phase has 3 or 4
# readings, of which 1 or 2 periodic: it was not named when the two at its boundaries counted); a
# phase of several periods is not named.
script = ('"$P" mark short begin; "$P" mark short end; "$P" mark medium begin; sleep 0.12; "$P" mark medium end; '
          '"$P" mark long begin; sleep 0.8; "$P" mark long end')
ok, lines = marked_report("few", script)
line = starting(lines, "host anon peak from few readings:")
check(ok and len(line) == 1 and "short (" in line[0] and "medium (" in line[0] and "long (" not in line[0],
      "the report names the short and medium phases' memory peaks as resting on few readings, not the long one's: %r"
      % (line or lines[-12:],))

# A phase whose CPU rests on a few samples (t_burn's 30 ms, about 6 at 199 Hz; under load a
# 15 ms burn took none) is named with its count and uncertainty, and so is an instant one (its
# two lines in one write, untimed, so the leader reads both at once: no sample can fall in it,
# and its 0 CPU s is no measure; two `perfscope mark` calls back to back are not instant: under
# make test-asan the second one's own start, sampled, put a sample in it); a phase of about 120
# (0.6 s) is not.
script = ('printf "instant begin\\ninstant end\\n" >> "$LLMPERFSCOPE_MARKERS"; '
          '"$P" mark brief begin; "$B" 0.03 burn.jsonl brief; "$P" mark brief end; '
          '"$P" mark steady begin; "$B" 0.6 burn.jsonl steady; "$P" mark steady end')
ok, lines = marked_report("fewcpu", script)
line = starting(lines, "CPU from few samples:")
check(ok and len(line) == 1 and "brief (" in line[0] and "instant (0 in " in line[0] and "steady (" not in line[0],
      "the report names the brief and instant phases' CPU as resting on few samples, not the steady one's: %r"
      % (line or lines[-12:],))
check(not starting(lines, "phases inside phases:"), "no phase held another: no line about nested phases")

# A run without markers: record's short report has no phases to show, so it shows the hottest
# functions of the whole run (it stopped at "No phases" before).
r = rec(["-o", "flat", "--", target("t_burn"), "0.3", "burn.jsonl", "flat"])
err = r.stderr.decode(errors="replace")
hot = err.split("## Hot functions, the whole run")[-1] if "## Hot functions, the whole run" in err else ""
check(r.rc == 0 and "No phases" in err and "| burn_main |" in hot,
      "record's report of a run without markers names its hot functions: %r" % err[-1500:])

# Phases inside a phase: the outer one's CPU is only its own time outside them, and the report says
# which it holds (an outer "request" read 0.00 cores around a busy prefill and decode).
script = ('"$P" mark request begin; "$P" mark prefill begin; "$B" 0.05 burn.jsonl p; "$P" mark prefill end; '
          '"$P" mark decode begin; "$B" 0.05 burn.jsonl d; "$P" mark decode end; "$P" mark request end')
ok, lines = marked_report("nest", script)
line = starting(lines, "phases inside phases:")
check(ok and len(line) == 1 and line[0].startswith("phases inside phases: request holds prefill, decode."),
      "the report says the request phase holds prefill and decode: %r" % (line or lines[-12:],))

# Never renamed or removed: an OUT, or an older OUT.old, that is not a run folder (a user's folder
# given as -o by mistake, a plain file): the run is refused (exit 2, one line), nothing touched.
os.makedirs("mine")
open("mine/thesis.txt", "w").write("x")
open("plain", "w").write("f")
for o in ("mine", "plain"):
    for i in range(2):
        r = rec(["-o", o, "--no-report", "--", "sh", "-c", "exit 0"])
        check(r.rc == 2 and len(r.stderr.decode().splitlines()) == 1 and "not a perfscope run folder" in r.stderr.decode(),
              "-o %s (not a run folder), try %d: exit 2, one line: %d %r" % (o, i, r.rc, r.stderr.decode()))
check(open("mine/thesis.txt").read() == "x" and sorted(os.listdir("mine")) == ["thesis.txt"]
      and open("plain").read() == "f" and not os.path.exists("mine.old") and not os.path.exists("plain.old"),
      "the user's folder and file are as they were, and no .old made")
os.makedirs("kept.old")
open("kept.old/keep", "w").write("y")
r1 = rec(["-o", "kept", "--no-report", "--", "sh", "-c", "exit 0"])
r2 = rec(["-o", "kept", "--no-report", "--", "sh", "-c", "exit 0"])
check(r1.rc == 0 and r2.rc == 2 and open("kept.old/keep").read() == "y" and os.path.isfile("kept/launcher.json"),
      "an older OUT.old that is not a run folder: kept, the run refused, OUT as it was: %d %d %r"
      % (r1.rc, r2.rc, r2.stderr.decode()))
# A folder of the user's that happens to hold a meta.json (a common name) is not a run folder.
os.makedirs("proj")
open("proj/meta.json", "w").write("{}")
open("proj/notes.txt", "w").write("n")
r = rec(["-o", "proj", "--no-report", "--", "sh", "-c", "exit 0"])
check(r.rc == 2 and sorted(os.listdir("proj")) == ["meta.json", "notes.txt"] and not os.path.exists("proj.old"),
      "a user's folder holding a meta.json: refused, left whole: %d %r" % (r.rc, r.stderr.decode()))
# "out/" is the folder out: the second run keeps the first as its sibling out.old.
r1 = rec(["-o", "slash/", "--no-report", "--", "sh", "-c", "exit 0", "s1"])
r2 = rec(["-o", "slash/", "--no-report", "--", "sh", "-c", "exit 0", "s2"])
check(r1.rc == 0 and r2.rc == 0 and launcher("slash")["command"][-1] == "s2"
      and launcher("slash.old")["command"][-1] == "s1" and not os.path.exists("slash/.old"),
      "-o with a trailing slash, twice: slash/ and slash.old/: %d %d %r" % (r1.rc, r2.rc, r2.stderr.decode()))
os.makedirs("empty")
r = rec(["-o", "empty", "--no-report", "--", "sh", "-c", "exit 0"])
check(r.rc == 0 and os.path.isfile("empty/launcher.json"), "an empty folder as OUT: used")
r = rec(["-o", "deep/er/out", "--no-report", "--", "sh", "-c", "exit 0"])
check(r.rc == 0 and os.path.isfile("deep/er/out/launcher.json"), "OUT's missing parent folders are made: %d %r"
      % (r.rc, r.stderr.decode()))

# SIGINT to record reaches the command, which decides (exits 3).
p = subprocess.Popen([tool, "record", "-o", "si", "--no-report", "--", target("f_sigint3"), "ready"], env=env,
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
for _ in range(3000):
    if os.path.exists("ready") or p.poll() is not None:
        break
    time.sleep(0.02)
check(os.path.exists("ready"), "f_sigint3 never got ready")
p.send_signal(signal.SIGINT)
try:
    out, err = p.communicate(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    out, err = p.communicate()
    die("record still running 60 s after SIGINT")
check(p.returncode == 3, "SIGINT forwarded: record exited %d, expected the command's 3 (stderr %r)" % (p.returncode, err[-300:]))
check(launcher("si").get("status") == "exit 3", "launcher.json after SIGINT: %r" % launcher("si").get("status"))

# Ctrl-C on a terminal: the command (in record's process group) gets the terminal's SIGINT once,
# never a second forwarded one; record exits with the command's 3.
import pty, select
pid, fd = pty.fork()
if pid == 0:
    os.execve(tool, [tool, "record", "-o", "tty", "--no-report", "--", target("f_sigcount")], env)
buf = b""
deadline = time.monotonic() + 60
while b"R" not in buf and time.monotonic() < deadline:
    if select.select([fd], [], [], 1)[0]:
        try:
            buf += os.read(fd, 1000)
        except OSError:
            break
check(b"R" in buf, "f_sigcount under a terminal never got ready: %r" % buf)
os.write(fd, b"\x03")
while time.monotonic() < deadline:
    if select.select([fd], [], [], 1)[0]:
        try:
            d = os.read(fd, 1000)
        except OSError:
            break
        if not d:
            break
        buf += d
_, st = os.waitpid(pid, 0)
os.close(fd)
check(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 3, "Ctrl-C under record: status %r, expected exit 3 (%r)" % (st, buf))
check(b"sigint 1\r\n" in buf, "Ctrl-C reached the command once: %r" % buf)

# rusage and the clock.
t0 = time.monotonic_ns()
r = rec(["-o", "ru", "--no-report", "--", target("t_burn"), "0.3", "burn.jsonl", "x"])
t1 = time.monotonic_ns()
check(r.rc == 0, "t_burn: exit %d" % r.rc)
lj = launcher("ru")
ru = lj.get("rusage", {})
check(ru.get("user_s", 0) + ru.get("system_s", 0) >= 0.2, "rusage of a 0.3 s CPU burn: %r" % ru)
check(ru.get("max_rss_kib", 0) > 0, "rusage max_rss_kib: %r" % ru)
check(t0 <= lj.get("start_ns", 0) < lj.get("end_ns", 0) <= t1,
      "start_ns/end_ns %r..%r not within the caller's monotonic %d..%d" % (lj.get("start_ns"), lj.get("end_ns"), t0, t1))
meta = json.load(open("ru/meta.json"))
check(lj.get("start_ns", 0) <= meta.get("t0_ns", 0) <= lj.get("end_ns", 0), "meta.json t0_ns within launcher's start..end")

# A raw exit_group: the shim never saw the end; launcher.json did.
r = rec(["-o", "eg", "--", target("f_exitgroup"), "5"])
check(r.rc == 5, "f_exitgroup 5: exit %d" % r.rc)
check(r.stdout == b"exit_group 5\n", "f_exitgroup stdout %r" % r.stdout)
check(json.load(open("eg/meta.json")).get("status") == "running", "eg/meta.json: still running (the shim cannot see a raw exit_group)")
check(launcher("eg").get("status") == "exit 5", "eg/launcher.json: %r" % launcher("eg").get("status"))
rj = json.load(open("eg/run.json"))
check(rj.get("status") == "exit 5", "run.json status %r: the report takes launcher.json's exit 5 over meta.json's running" % rj.get("status"))
check("- status: exit 5" in r.stderr.decode(), "the short report says exit 5: %r" % r.stderr.decode()[:600])

# A static executable: one line, it runs, its status is its own.
if static:
    r = rec(["-o", "st", "--", static])
    err = r.stderr.decode()
    check(r.rc == 4, "static: exit %d, expected 4" % r.rc)
    check(len([l for l in err.splitlines() if "static executable" in l]) == 1, "static: one line says so: %r" % err)
    check(launcher("st").get("status") == "exit 4", "static: launcher.json %r" % launcher("st").get("status"))
else:
    info("no static libc: the static case is not checked")

# A setuid file of another user: one line, it runs, its status is its own (255: main returns -1).
if suid:
    r = rec(["-o", "su", "--", suid])
    err = r.stderr.decode()
    check(r.rc == 255, "setuid: exit %d, expected 255" % r.rc)
    check(len([l for l in err.splitlines() if "is setuid" in l]) == 1, "setuid: one line says so: %r" % err)
    check(launcher("su").get("status") == "exit 255", "setuid: launcher.json %r" % launcher("su").get("status"))
else:
    info("not root: the setuid case is not checked")
# Root's own setuid-root file is measured: no such line.
if os.geteuid() == 0:
    import shutil
    shutil.copy(target("f_exitgroup"), "own_suid")
    os.chmod("own_suid", 0o4755)
    r = rec(["-o", "os", "--no-report", "--", os.path.abspath("own_suid"), "0"])
    check(r.rc == 0 and "setuid" not in r.stderr.decode(), "root's own setuid file: exit %d, %r" % (r.rc, r.stderr))
finish()
EOF2
checks_done
