#!/usr/bin/env bash
# Fetches the ONNX 1.20.1 backend node tests (onnx/backend/test/data/node in
# the source distribution on PyPI; not a Debian package) into a cache outside
# the repository, for the second conformance suite:
#   tools/scripts/fetch-onnx-testdata.sh [CACHE_DIR]
# CACHE_DIR defaults to $RIVET_ONNX_TESTDATA_CACHE, else
# ~/.cache/rivet/onnx-1.20.1; the tests land in CACHE_DIR/node. Does nothing
# when they are already there.
set -euo pipefail
version=1.20.1
cache=${1:-${RIVET_ONNX_TESTDATA_CACHE:-$HOME/.cache/rivet/onnx-$version}}
if [ -f "$cache/node/.complete" ]; then
  echo "onnx $version node tests: $cache/node"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --no-binary :all: "onnx==$version" -d "$work"
tar -xzf "$work/onnx-$version.tar.gz" -C "$work" \
  --wildcards "onnx-$version/onnx/backend/test/data/node/*"
mkdir -p "$cache"
rm -rf "$cache/node"
mv "$work/onnx-$version/onnx/backend/test/data/node" "$cache/node"
touch "$cache/node/.complete"
echo "onnx $version node tests: $(ls "$cache/node" | wc -l) in $cache/node"
