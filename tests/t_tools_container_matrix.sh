#!/usr/bin/env bash
# t_tools_container_matrix: matrix cases whose prefix is `docker run` (docs/containers.md), with
# the real daemon. The image (tests/container_lib.sh) holds tests/targets/c_engine.c as
# /opt/a/engine and /opt/b/engine, folders the host does not have (--a and --b name folders
# inside the image).
# 1. both arms through docker: each arm's status is the engine's own (exit 7), its run.json names
#    the image, its markers came from inside, no container is left.
# 2. a hanging engine under --timeout 3: the arm's status is timeout, perfscope stopped the
#    container itself (container.json), and no container is left, running or stopped.
set -u
. "$ROOT/tests/lib.sh"
. "$ROOT/tests/container_lib.sh"
need_shim
need_tool perfscope-report
need_docker
[ -f "$TOOLS/libperfscope.so" ] || export PERFSCOPE_SHIM=$SHIM
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0
[ ! -e /opt/a ] && [ ! -e /opt/b ] || fail "/opt/a or /opt/b exists on the host: the test needs folders only the image has"
build_target c_engine
IMAGE=perfscope-test-matrix-$$
mkdir img
add_file img "$TBUILD/c_engine" /opt/a/engine
add_file img "$TBUILD/c_engine" /opt/b/engine
make_image "$IMAGE" img
cat >cases.json <<EOF
{"defaults": {"prefix": ["docker", "run", "--rm", "$IMAGE"], "binary": "engine"},
 "cases": [{"label": "run"}]}
EOF
cat >hang.json <<EOF
{"defaults": {"prefix": ["docker", "run", "$IMAGE"], "binary": "engine"},
 "cases": [{"label": "hang", "args": ["hang"]}]}
EOF
"$TOOL" matrix cases.json --a a=/opt/a --b b=/opt/b --order AB --timeout 120 --precheck off \
  --out mx >mx.log 2>&1
rc=$?
# Every arm's engine exits 7 here, so no case has a verdict: exit 2, said (DESIGN 11).
check "matrix exit $rc (2: no verdict): $(tail -n 5 mx.log)" [ "$rc" -eq 2 ]
check "the matrix says there is no verdict: $(tail -n 5 mx.log)" grep -q "no case has a verdict" mx.log
"$TOOL" matrix hang.json --a a=/opt/a --b b=/opt/b --order A --timeout 3 --precheck off \
  --out hx >hx.log 2>&1
rc=$?
check "hang matrix exit $rc (2: its one arm timed out, no verdict): $(tail -n 5 hx.log)" [ "$rc" -eq 2 ]
left=$(docker ps -aq --filter "ancestor=$IMAGE")
check "no container left behind: $left" [ -z "$left" ]

py_check matrix - "$IMAGE" <<'EOF'
import json, sys
from checks import check, require, finish

image = sys.argv[1]
m = json.load(open("mx/matrix.json"))
arms = m["cases"][0]["arms"]
check(len(arms) == 2, "two arms: %s" % arms)
for a in arms:
    check(a.get("status") == "exit 7", "arm %s status %s" % (a.get("side"), a.get("status")))
    run = json.load(open(a["dir"] + "/run.json"))
    check(run.get("container_image") == image, "arm %s run.json container_image %s" % (a["side"], run.get("container_image")))
    side = "a" if a["side"] == "A" else "b"
    check(run["runner"]["command"][-1] == "/opt/%s/engine" % side, "arm command %s" % run["runner"]["command"])
    names = {json.loads(l).get("name") for l in open(a["dir"] + "/phases.jsonl") if l.strip()}
    check({"load", "decode"} <= names, "arm %s phases from inside: %s" % (a["side"], names))
h = json.load(open("hx/matrix.json"))["cases"][0]["arms"]
check(len(h) == 1 and h[0].get("status") == "timeout" and h[0].get("timed_out") is True, "hang arm %s" % h)
if h:
    c = json.load(open(h[0]["dir"] + "/container.json"))
    check(c["stopped_by_perfscope"] is True and c["host_pid"] > 0, "container.json %s" % c)
    print("# hang arm: %.1f s wall, killed after stop -t: %s" % (h[0]["wall_s"], c["killed"]))
finish()
EOF
checks_done
