#!/usr/bin/env bash
# t_shim_review_fds: regressions from a review of the shim (docs/shim.md: the shim never changes the
# target's behaviour, output, exit status, errno, signals or descriptors), the descriptors. Each
# case runs its r_* target without and with the shim (PERFSCOPE_HZ=997) and compares (harness:
# tests/reviewlib.py); cases numbered as in the review:
#  8 closerange   close_range(5, 3, 0) is -1 EINVAL
# 10 fdnum        the first open() in main returns 3 (libunwind's pipe is not at 3/4)
# 14 forktransit  600 fork children of a process whose other thread dlopens in a loop: no child's
#                 dup2 onto 3..15 waits for a descriptor move of its parent's thread (a second
#                 review: 11 of 1000 children waited 0.5-1.2 s before)
# 15 unwpipe      the target dup2s its files onto 505..539, where libunwind's pipe is (a limit
#                 of 4096): its files hold only its own bytes, its writes and closes work; the
#                 shim turns libunwind off and says so (before: close EBADF, libunwind read,
#                 wrote and closed the target's files there)
# 16 dup2all      the target dup2s its file onto every number up to its limit (64 and 1024, markers
#                 on, so the leader's lock, watch and wake-up are open): every dup2 and close works
#                 and the file stays empty; no number above was free to move the shim's to, so the
#                 shim gives them up (before: close EBADF, the wake-up's 8 bytes written into the
#                 target's file; a transparency review, 2026-12-07)
# 17 closed012    started with 0, 1 and 2 closed, the target's first three opens get 0, 1, 2 in
#                 each of 100 runs (before: the shim's threads' first files took them for a moment,
#                 1 2 3 or 0 2 1 in 7-20 of 100 runs; a transparency review)
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review_fds.sh 8`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_closerange r_fdnum r_forktransit r_unwpipe r_dup2all r_closed012; do
    build_target "$t"
done

python3 - "$@" <<'EOF'
import os
import sys
from reviewlib import *
from shimlib import target, plain_env, sig_name


def c_closerange():
    base_then_shim([target("r_closerange")], "out-closerange",
                   lambda b: b.rc == 0 and b.stdout.startswith(b"close_range(5, 3, 0) = -1 errno=Invalid argument\n"),
                   "r_closerange")


def c_fdnum():
    base_then_shim([target("r_fdnum")], "out-fdnum",
                   lambda b: b.rc == 0 and b.stdout == b"first open() in main returned 3, second 4\n",
                   "r_fdnum (descriptor numbers)", UNWIND=None)


def c_forktransit():
    base_then_shim([target("r_forktransit"), "600"], "out-forktransit",
                   lambda b: b.rc == 0 and b.stdout == b"children whose dup2s took over 80 ms: 0 of 600\n",
                   "r_forktransit (fork children's dup2 waits)", timeout=120)


def c_unwpipe():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4096:
        note("descriptor limit %d: libunwind's pipe is not at 512 here, case not run" % hard)
        return
    argv = ["sh", "-c", 'ulimit -n 4096 && mkdir -p "$1" && exec "$0" "$1"', target("r_unwpipe")]
    # the folder for the target's files is the same for both runs: each empties its files
    base_then_shim(argv + [os.path.abspath("unwpipe-files")], "out-unwpipe",
                   lambda b: b.rc == 0 and b.stdout == b"bad=0\n", "r_unwpipe")
    log = open(os.path.join("out-unwpipe", "perfscope.log")).read() if os.path.exists("out-unwpipe/perfscope.log") else ""
    need("libunwind's pipe" in log, "r_unwpipe: the log does not say libunwind went off: %r" % log)


def c_dup2all():
    for lim in (64, 1024):
        out = "out-dup2all-%d" % lim
        markers = os.path.abspath(out + ".markers")
        open(markers, "w").close()
        argv = ["sh", "-c", 'ulimit -n %d && exec "$0" "$1"' % lim, target("r_dup2all"), os.path.abspath("dup2all-%d.dat" % lim)]
        base_then_shim(argv, out, lambda b: b.rc == 0 and b.stdout == b"dup2 failed 0, close failed 0, bytes 0\n",
                       "r_dup2all (limit %d)" % lim, LLMPERFSCOPE_MARKERS=markers)


def c_closed012():
    exe = target("r_closed012")
    argv = ["sh", "-c", 'exec "$0" "$1" <&- >&- 2>&-', exe]
    res = os.path.abspath("closed012.txt")
    base = run(argv + [res], plain_env(), what="r_closed012")
    got = open(res).read() if os.path.exists(res) else ""
    need(base.rc == 0 and got == "0 1 2 3 4\n", "r_closed012 without the shim: %s, %r" % (sig_name(base.rc), got))
    wrong = []
    for i in range(100):
        os.remove(res)
        r = run(argv + [res], senv("out-closed012-%d" % i), what="r_closed012")
        got = open(res).read() if os.path.exists(res) else ""
        if r.rc != 0 or got != "0 1 2 3 4\n":
            wrong.append((sig_name(r.rc), got))
    need(not wrong, "r_closed012 under the shim: %d of 100 runs differ: %r" % (len(wrong), wrong[:5]))


CASES = [(8, "closerange", c_closerange),
         (10, "fdnum", c_fdnum),
         (14, "forktransit", c_forktransit),
         (15, "unwpipe", c_unwpipe),
         (16, "dup2all", c_dup2all),
         (17, "closed012", c_closed012)]
run_cases(CASES, sys.argv[1:])
EOF
