#!/usr/bin/env bash
# bench/run.sh: `make bench`. Builds the fixed-work target into build/bench/, finds (or, as
# root, installs) gperftools' libprofiler, then runs bench/analyze.py, which runs the
# alternating with/without pairs and writes bench/RESULTS.md, then bench/pool.py (the thread-pool
# target against gperftools and perf record, fork+exec per process, the cost per sample taken
# apart by bench/sample_cost.c), then bench/resolve.py (the 199 Hz defaults' cost on the work
# target and on the pool, resolved by many pairs), then bench/shimthreads.py (the shim's own
# threads: start-up against steady state), then bench/symbolize.sh, which adds the symbolizer's
# speed and peak memory to it as a section of its own, and last bench/html.sh, which prints
# report.html's size and opening time at 100k samples. It reports; it never fails on figures:
# exit 0 unless the bench itself could not run.
# Knobs: BENCH_N (repetitions, default 5), BENCH_BUDGET_S (stop starting repetitions after
# this many seconds, default 500), BENCH_ITERS (target iterations per thread); BENCH_POOL_N
# (thread-pool pairs per configuration, default 10; BENCH_POOL_BUDGET_S, default 360, stops
# starting repetitions after that many seconds), BENCH_FORK_N (fork+exec pairs, default 6),
# BENCH_COST_ROUNDS (bench/sample_cost rounds, default 9); BENCH_RES_CPU_N and BENCH_RES_POOL_N
# (bench/resolve.py: pairs at 199 Hz on the work target and on the pool, defaults 240 and 120,
# about 30 minutes in all: at this machine's spread, a 95% interval about half each target wide;
# BENCH_RES_EXTRA_N, default 40: the pool with sampling off and with an idle thread instead),
# BENCH_RES_BUDGET_S (stop starting those pairs after this many seconds, default 2400);
# BENCH_THREADS_ROUNDS (bench/shimthreads.py rounds of a short and a long run, default 4); SYMBOLIZE_N
# (samples of the symbolizer's runs, default 200000: about a minute more; see bench/symbolize.sh).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
mkdir -p "$BUILD/bench"
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror \
  -o "$BUILD/bench/target" bench/target.c || { echo "bench: cannot build the target"; exit 1; }
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror \
  -o "$BUILD/bench/threadpool" bench/threadpool.c || { echo "bench: cannot build the thread pool"; exit 1; }
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror \
  -o "$BUILD/bench/sample_cost" bench/sample_cost.c -lunwind || { echo "bench: cannot build sample_cost"; exit 1; }
gcc -std=gnu11 -O2 -g -fPIC -shared -pthread -Wall -Wextra -Werror \
  -o "$BUILD/bench/idlethread.so" bench/idlethread.c || { echo "bench: cannot build idlethread.so"; exit 1; }

LIBPROFILER=/usr/lib/x86_64-linux-gnu/libprofiler.so.0
if [ ! -e "$LIBPROFILER" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "bench: installing google-perftools (peer profiler)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q google-perftools >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q google-perftools >/dev/null 2>&1; }
  fi
  [ -e "$LIBPROFILER" ] || { echo "bench: gperftools not installed (apt-get install google-perftools); skipping that peer"; LIBPROFILER=; }
fi

python3 bench/analyze.py --target "$BUILD/bench/target" --shim "$BUILD/libperfscope.so" \
  --libprofiler "$LIBPROFILER" --work "$BUILD/bench/runs" --results bench/RESULTS.md \
  --n "${BENCH_N:-5}" --budget "${BENCH_BUDGET_S:-500}" ${BENCH_ITERS:+--iters "$BENCH_ITERS"}
rc=$?
# After analyze.py, which writes RESULTS.md whole: the thread pool, fork+exec and the cost per
# sample taken apart, each a section of its own.
python3 bench/pool.py --pool "$BUILD/bench/threadpool" --shim "$BUILD/libperfscope.so" \
  --libprofiler "$LIBPROFILER" --work "$BUILD/bench/runs" --results bench/RESULTS.md \
  --n "${BENCH_POOL_N:-10}" --budget "${BENCH_POOL_BUDGET_S:-360}" --fork-n "${BENCH_FORK_N:-6}" --cost "$BUILD/bench/sample_cost" \
  --idle-thread "$BUILD/bench/idlethread.so" \
  --cost-rounds "${BENCH_COST_ROUNDS:-9}"
[ $? -ne 0 ] && rc=1
# The defaults' cost at 199 Hz on the work target and on the pool, resolved by many pairs.
python3 bench/resolve.py --target "$BUILD/bench/target" --pool "$BUILD/bench/threadpool" \
  --shim "$BUILD/libperfscope.so" \
  --work "$BUILD/bench/runs" --results bench/RESULTS.md --budget "${BENCH_RES_BUDGET_S:-2400}" \
  --cpu-n "${BENCH_RES_CPU_N:-240}" --pool-n "${BENCH_RES_POOL_N:-120}" --extra-n "${BENCH_RES_EXTRA_N:-40}" \
  --idle-thread "$BUILD/bench/idlethread.so" \
  ${BENCH_ITERS:+--iters "$BENCH_ITERS"}
[ $? -ne 0 ] && rc=1
# The shim's own threads: what they cost once a run against what they cost each second.
python3 bench/shimthreads.py --target "$BUILD/bench/target" --shim "$BUILD/libperfscope.so" \
  --work "$BUILD/bench/runs" --results bench/RESULTS.md --rounds "${BENCH_THREADS_ROUNDS:-4}" \
  ${BENCH_ITERS:+--iters "$BENCH_ITERS"}
[ $? -ne 0 ] && rc=1
# After analyze.py, which writes RESULTS.md whole: this adds its section to that file.
BUILD=$BUILD SYMBOLIZE_OUT=bench/RESULTS.md bench/symbolize.sh
src=$?
# report.html's size and opening time at 100k samples: printed, not a result of the file.
BUILD=$BUILD bench/html.sh
[ $rc -ne 0 ] && exit $rc
exit $src
