#!/usr/bin/env bash
# Run every built bundle: one histogram OUTDIR/<id>.json per test.
# usage: run.sh OUTDIR [SECONDS_PER_TEST (default 1)] [--seed N] [--launches N] [--only ID]
# A bundle that dies is restarted after its failing test (recorded as <id>.failed).
# BUNDLE_TIMEOUT=S kills a bundle run after S seconds (a watchdog besides the
# harness's own spin bounds); the test it was in is then recorded as failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUTDIR [SECONDS_PER_TEST] [harness options]}
secs=${2:-1}
shift; [ $# -gt 0 ] && shift
mkdir -p "$out"
watchdog=()
if [ "${BUNDLE_TIMEOUT:-0}" -gt 0 ]; then watchdog=(timeout -s KILL "$BUNDLE_TIMEOUT"); fi
status=0
for src in "$here"/bundle*.cu; do
  b=${src%.cu}
  if [ ! -x "$b" ]; then echo "run.sh: $(basename "$b") not built" >&2; status=1; continue; fi
  for try in 1 2 3 4 5 6 7 8; do
    ${watchdog[@]+"${watchdog[@]}"} "$b" --out "$out" --seconds "$secs" --resume "$@" && break
    echo "run.sh: $(basename "$b") failed (try $try); resuming after the failing test" >&2
    status=1
  done
done
exit $status
