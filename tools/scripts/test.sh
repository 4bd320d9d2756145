#!/usr/bin/env bash
# Builds Rivet and runs the whole test suite: the unit and program tests
# (ctest, last, so its summary closes the log) after each libFuzzer target has
# run for a short time (FUZZ_SECONDS, default 45) in a separate clang build;
# then the Python package's tests (python-test.sh; PYTHON_TESTS=0 skips them).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
# The compiler cache serves any clone (paths relative to the checkout; the
# fuzz build's line tables do not pin the working directory).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=1
# -O2 without debug info: the same code and warnings, a faster build.
BUILD_TYPE=${BUILD_TYPE:-Release} tools/scripts/build.sh
# The second conformance suite (ONNX 1.20.1's node tests) is fetched from PyPI
# into a cache; without it ctest skips that suite and says so.
tools/scripts/fetch-onnx-testdata.sh ||
  echo "warning: could not fetch the ONNX 1.20.1 node tests; that suite is skipped"

FUZZ_SECONDS=${FUZZ_SECONDS:-45}
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  # One file per translation unit here (the main build batches them:
  # RIVET_UNITY_BUILD), so that CI also compiles every file on its own.
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRIVET_FUZZ=ON \
    -DRIVET_UNITY_BUILD=OFF
  fuzzers=$(ls fuzz/*Fuzzer.cc 2>/dev/null | xargs -n1 basename | sed 's/\.cc$//')
  for f in $fuzzers; do
    cmake --build build-fuzz --target "$f"
    corpus=fuzz/corpus/$f
    work=$(mktemp -d)
    [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
    echo "fuzz: $f for ${FUZZ_SECONDS}s"
    ASAN_OPTIONS=allocator_may_return_null=1 build-fuzz/fuzz/"$f" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix=fuzz/ "$work" 2>&1 | tail -n 15
    rm -rf "$work"
  done
fi

(cd build && ctest --output-on-failure -j2 --timeout 900)

# The Python package (pip install ./ into build-venv/, then pytest):
# PYTHON_TESTS=0 skips it.
if [ "${PYTHON_TESTS:-1}" != 0 ]; then
  tools/scripts/python-test.sh
fi
