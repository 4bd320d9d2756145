#!/usr/bin/env bash
# A long differential search: N generated programs (default 10^6), half
# .rvir programs and half ONNX graphs, in chunks of 20,000 with seeds that
# never overlap the CI defaults, one tester process per core. A chunk stops
# at its fifth disagreement; every chunk's log is kept, and the summary says
# how many programs ran and which chunks failed.
#   tools/scripts/differential-campaign.sh [N] [BUILD_DIR] [LOG_DIR]
# It runs copies of the test binaries and libraries, so rebuilding during a
# campaign does not change the code under test.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
BUILD=${2:-build}
LOGS=${3:-/tmp/rivet-differential-campaign}
CHUNK=20000
JOBS=$(nproc)
mkdir -p "$LOGS/bin"
cp "$BUILD/tests/vm_differential_test" "$BUILD/tests/frontend_onnx_differential_test" "$LOGS/bin/"
cp -P "$BUILD"/src/librivet_*.so* "$LOGS/bin/"
export LD_LIBRARY_PATH="$LOGS/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RIVET_DIFF_ITERATIONS=$CHUNK RIVET_DIFF_SECONDS=100000
chunks=()
for ((I = 0; I < N / CHUNK; ++I)); do
  if ((I % 2 == 0)); then chunks+=("vm_differential_test $((900000000 + I * CHUNK))")
  else chunks+=("frontend_onnx_differential_test $((900000000 + I * CHUNK))"); fi
done
run_chunk() {
  local Bin=$1 Seed=$2 Log="$LOGS/$1.$2.log"
  [[ -f "$Log.done" ]] && return 0
  RIVET_DIFF_SEED=$Seed nice -n 10 "$LOGS/bin/$Bin" >"$Log" 2>&1 || true
  touch "$Log.done"
}
export -f run_chunk
export LOGS
printf '%s\n' "${chunks[@]}" | xargs -P "$JOBS" -L 1 bash -c 'run_chunk $0 $1'
Ran=$(grep -ho "differential: [0-9]* programs" "$LOGS"/*.log | awk '{s += $2} END {print s}')
echo "programs run: $Ran"
grep -l "disagrees" "$LOGS"/*.log | sed 's/^/disagreement in /' || echo "no disagreement"
