#!/usr/bin/env bash
# Builds and installs the Python package (`pip install .`: scikit-build-core
# builds the extension and the libraries it needs with Ninja in build-python/)
# into a venv (build-venv/, or $VENV), then runs its tests (python/tests).
# Debian's Python is "externally managed": everything goes into the venv.
# numpy, pytest and onnx (and nanobind and scikit-build-core at build time)
# come from PyPI, and ray[serve] for rivet.serve's tests (large: pip's wheel
# cache, ~/.cache/pip, keeps it between runs; SERVE_TESTS=0 leaves Ray out and
# deselects the cluster test). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-$PWD/build-venv}
# The compiler cache serves the objects of tools/scripts/build.sh's build
# (the same flags; paths relative to the checkout).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=1
start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q numpy pytest onnx
pytest_args=()
if [ "${SERVE_TESTS:-1}" != 0 ]; then
  "$VENV/bin/pip" install -q "ray[serve]"
else
  pytest_args+=(-m "not serve")
fi
venv_done=$(date +%s)
# The compiler as build.sh's CMake finds it (c++): ccache keys on its name,
# and scikit-build-core's CMake would otherwise pick x86_64-linux-gnu-g++.
launcher=(-Ccmake.define.CMAKE_CXX_COMPILER="$(command -v "${CXX:-c++}")"
          -Ccmake.define.CMAKE_C_COMPILER="$(command -v "${CC:-cc}")")
if command -v ccache >/dev/null; then
  launcher+=(-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
            -Ccmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
fi
log=$VENV/pip-install.log
echo "python-test: pip install ./ (log: $log)"
if ! "$VENV/bin/pip" install -v ./ -Ccmake.define.RIVET_WERROR=ON \
    ${launcher[@]+"${launcher[@]}"} >"$log" 2>&1; then
  tail -n 60 "$log"
  exit 1
fi
grep -E '^\[[0-9]+/[0-9]+\]' "$log" | tail -n 1 || true
built=$(date +%s)
ext=$("$VENV/bin/python" -c 'import rivet._rivet as m; print(m.__file__)')
echo "extension: $ext"
ldd "$ext" | grep -E 'rivet|not found' || true
# From outside the checkout, so that the installed package is the one tested.
(cd /tmp && "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  "$OLDPWD/python/tests" ${pytest_args[@]+"${pytest_args[@]}"} "$@")
end=$(date +%s)
echo "python-test: venv $((venv_done - start)) s, build+install $((built - venv_done)) s, tests $((end - built)) s"
