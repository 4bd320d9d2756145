#!/usr/bin/env bash
# Installs Rivet's build and test dependencies from Debian packages (see
# ../shared/TOOLCHAIN.md). Does nothing when everything is already present.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ clang lld libclang-rt-14-dev
  llvm-16-dev libzstd-dev libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libfmt-dev libboost-graph-dev libgtest-dev libdnnl-dev ocl-icd-opencl-dev libdlpack-dev
  python3-numpy python3-pip python3-venv python3-dev libfreeimage3
  python3-jsonschema graphviz
  iproute2  # network namespaces of the Ray Serve cluster test
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all dependencies present"
fi
