#!/usr/bin/env bash
# Configures and builds Rivet into ${BUILD_DIR:-build} (Ninja, ccache,
# warnings as errors; BUILD_TYPE, default RelWithDebInfo). Extra arguments go
# to cmake. BUILD_TARGETS (e.g. "rivet"): only those targets and what they
# need (quickstart.sh: the CLI without the ~300 test executables).
set -euo pipefail
cd "$(dirname "$0")/../.."
# Paths inside the checkout hash relative to it: a clone elsewhere (CI's)
# reuses the compiler cache of this one.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DRIVET_WERROR=ON "$@"
# shellcheck disable=SC2086 # BUILD_TARGETS is a list of target names
cmake --build "$BUILD_DIR" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
