#!/usr/bin/env bash
# Runs one test file N times in a row and stops at the first failing run: how a new
# end-to-end test earns "not flaky" (a test that fails one run in N is a defect).
#
#   scripts/repeat-test.sh FILE [N]     N defaults to 20
#
# Each run's output goes to $REPEAT_LOG_DIR/run-K.log (a temp dir by default); a failing
# run's log is printed. Runs on the Node.js npm scripts use (node_modules/.bin first).
# Environment the file needs (TEST_DATABASE_URL, cluster tools' paths) is passed through.
set -euo pipefail
cd "$(dirname "$0")/.."

file=${1:?usage: scripts/repeat-test.sh FILE [N]}
runs=${2:-20}
[ -f "$file" ] || { echo "repeat-test: no such file: $file" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "repeat-test: N must be a positive integer, not $runs" >&2; exit 2; }
logs=${REPEAT_LOG_DIR:-$(mktemp -d -t repeat-test-XXXXXX)}
mkdir -p "$logs"
export PATH="$PWD/node_modules/.bin:$PATH"

started=$(date +%s)
for k in $(seq 1 "$runs"); do
  t0=$(date +%s)
  if node --import tsx --test "$file" >"$logs/run-$k.log" 2>&1; then
    pass=$(sed -n 's/^ℹ pass //p' "$logs/run-$k.log")
    skipped=$(sed -n 's/^ℹ skipped //p' "$logs/run-$k.log")
    echo "repeat-test: run $k/$runs passed ($pass tests, $skipped skipped) in $(( $(date +%s) - t0 )) s"
    if [ "${pass:-0}" = 0 ]; then
      echo "repeat-test: run $k ran no test; see $logs/run-$k.log" >&2
      exit 1
    fi
  else
    echo "repeat-test: run $k/$runs FAILED after $(( $(date +%s) - t0 )) s; its log ($logs/run-$k.log):" >&2
    cat "$logs/run-$k.log" >&2
    exit 1
  fi
done
echo "repeat-test: $file passed $runs runs in a row in $(( $(date +%s) - started )) s (logs in $logs)"
