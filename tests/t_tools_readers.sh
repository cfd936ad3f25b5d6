#!/usr/bin/env bash
# t_tools_readers.sh: the sample, maps and phases readers (symbolize/) and the first report, on
# synthetic good and hostile files (tests/readers_check.py). Named "tools" so `make test-asan`
# runs it against the sanitizer build too. Never writes outside its scratch folder (the cwd).
set -u
tool=${TOOLS:?}/perfscope-report
if [ ! -x "$tool" ]; then
  echo "$tool is not built (make $(basename "$TOOLS")/perfscope-report)"
  exit 1
fi
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
exec python3 "$ROOT/tests/readers_check.py" "$tool"
