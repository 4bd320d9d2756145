#!/usr/bin/env bash
# Configures and builds Rivet into ${BUILD_DIR:-build} (Ninja, ccache,
# warnings as errors). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIVET_WERROR=ON "$@"
cmake --build "$BUILD_DIR"
