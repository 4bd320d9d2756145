#!/usr/bin/env bash
# One command from a fresh machine to Rivet's main job: install dependencies,
# build, and run an example program that loops over a dynamic-length sequence.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
deps_s=$SECONDS
# Only the CLI and its libraries (the tests are test.sh's), optimized without
# debug info as test.sh builds them, so that test.sh reuses the objects.
BUILD_TYPE=${BUILD_TYPE:-Release} BUILD_TARGETS=rivet tools/scripts/build.sh
build_s=$((SECONDS - deps_s))
mkdir -p out/example
(
  set -x
  build/tools/rivet run examples/loop_over_sequence.rvir \
    --input xs=examples/sequence.npy --output-dir out/example
)
echo "quickstart: dependencies ${deps_s} s, build ${build_s} s, total ${SECONDS} s"
