#!/usr/bin/env bash
# gpu-check.sh - Builds the GPU check bundle here; with --local, runs it here.
#
# Runs on the build machine (no GPU needed) after the build. Writes a folder
# (default gpu-bundle/ in the checkout, git-ignored) that the GPU machine
# runs with tools/scripts/gpu-device-check.py, needing nothing of the build:
#
#   rivet-run            the deployment runner (runtime library only)
#   lib/                 librivet_runtime.so and every non-system library
#                        rivet-run loads (librivet_kernels.so, oneDNN, fmt,
#                        ...: ldd's list); those over 1 MiB as .xz, which the
#                        device script unpacks
#   cases/NAME.rvx       each committed model and test program compiled for
#                        CUDA, and NAME.cpu.rvx for the CPU (a control)
#   cases/CASE/inputs/   the inputs of a case (rivet run --save-inputs)
#   cases/CASE/expected/ the reference interpreter's outputs on them
#   cases.json           the manifest: per case its .rvx files, inputs,
#                        expected outputs (or the reference's error),
#                        tolerance and compile errors; per bench model its
#                        executables and batches
#   torch_models/        tools/models' PyTorch definitions (common.py,
#                        export_*.py), from which the device script builds
#                        the benchmark's PyTorch baselines
#
# A case whose compilation fails is recorded and the script goes on. The
# large models of tools/models (BENCH_MODELS: mobilenet_v2 by default, or
# resnet18) are added for the benchmark when the model cache has them (or
# torch can export them): per batch of BENCH_BATCHES an executable compiled
# for that shape only (--input-shape), then (BENCH_DYNAMIC_BATCH=1) one for
# every batch (the ONNX batch axis is symbolic), each only while the bundle
# stays within what a device call carries. Each is ~14 MiB for mobilenet_v2
# (all three fit next to oneDNN's ~7 MiB as xz) and ~45 MiB for resnet18
# (only its batch-1 executable fits). The committed dynamic models
# (transformer, lstm, rnn_loop, branch) are benchmarked from their cases'
# executables, at shapes the device script picks.
#
# Usage: tools/scripts/gpu-check.sh [--local] [--no-build] [--bundle DIR]
#                                   [--no-bench-models] [-- DEVICE-ARGS...]
#   --local            then run the device script here on the CPU .rvx files
#                      (the torch parts are skipped without torch, unless
#                      RIVET_GPU_CHECK_TORCH_DEVICE=cpu); the bench models
#                      get CPU executables too, outside the cap: such a
#                      bundle is for here, rebuild it without --local (or
#                      use --bundle) before carrying it
#   --no-build         with --local: reuse the bundle as it is
#   --bundle DIR       where the bundle goes (default gpu-bundle/)
#   --no-bench-models  leave out the large models (BENCH_MODELS)
#   -- DEVICE-ARGS     with --local: arguments of the device script
#                      (--budget 120, --rounds 2, --bench-filter lstm, ...)
# Environment:
#   RIVET, RIVET_RUN   the binaries (default build/tools/rivet, rivet-run)
#   CUDA_TARGET_ARGS   compile flags of the GPU executables
#                      (default "--target cuda --cpu x86-64-v3")
#   CPU_TARGET_ARGS    compile flags of the CPU controls
#                      (default "--target cpu --cpu x86-64-v3")
#   (x86-64-v3: the GPU machine's CPU is not this one; a .rvx built for the
#   host's CPU is refused on a CPU without its features.)
#   BENCH_MODELS       default "mobilenet_v2" (resnet18 was measured at
#                      batch 1 in the first device run); "resnet18" takes
#                      that one instead, "resnet18 mobilenet_v2" both while
#                      they fit. RIVET_MODEL_CACHE: where they are (default
#                      ~/.cache/rivet/models)
#   BENCH_BATCHES      batches of the bench models (default "1 8"): one
#                      static executable each
#   BENCH_DYNAMIC_BATCH 1 (default): also one executable for any batch,
#                      benchmarked at every batch of BENCH_BATCHES; 0: not
#   BUNDLE_MAX_MIB     size cap of the bundle (default 60; it is also kept
#                      within the 64 MiB a device call carries, working tree
#                      included, less CARRY_MARGIN_KIB, default 1024, for
#                      the tree to grow)
#   ONLY               a regular expression: only the cases it matches
#   PYTHON             default /usr/bin/python3 (needs numpy for --local)
#   CONFORMANCE=1      add the ONNX conformance pass list's models that
#                      have GPU kernels (tools/scripts/gpu-conformance-
#                      bundle.py; needs onnx; ~25 MiB: set BENCH_MODELS="");
#                      CONFORMANCE_ONLY=FILE: only the tests it names
#
# Then, on the GPU machine (device tool: carry ["gpu-bundle"], timeout_s
# 360; the device script stays within its --budget, 285 s by default):
#   PYTHONUNBUFFERED=1 python3 tools/scripts/gpu-device-check.py gpu-bundle
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1

LOCAL=0
BUILD=1
BENCH=1
BUNDLE=$ROOT/gpu-bundle
DEVICE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
  --)
    shift
    DEVICE_ARGS=("$@")
    break
    ;;
  --local) LOCAL=1 ;;
  --no-build) BUILD=0 ;;
  --no-bench-models) BENCH=0 ;;
  --bundle)
    shift
    BUNDLE=${1:?--bundle needs a folder}
    ;;
  -h | --help)
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "gpu-check.sh: unknown argument '$1' (see --help)" >&2
    exit 2
    ;;
  esac
  shift
done
case "$BUNDLE" in /*) ;; *) BUNDLE=$ROOT/$BUNDLE ;; esac

RIVET=${RIVET:-$ROOT/build/tools/rivet}
RIVET_RUN=${RIVET_RUN:-$ROOT/build/tools/rivet-run}
CUDA_TARGET_ARGS=${CUDA_TARGET_ARGS---target cuda --cpu x86-64-v3}
CPU_TARGET_ARGS=${CPU_TARGET_ARGS---target cpu --cpu x86-64-v3}
BENCH_MODELS=${BENCH_MODELS-mobilenet_v2}
BENCH_BATCHES=${BENCH_BATCHES-1 8}
BENCH_DYNAMIC_BATCH=${BENCH_DYNAMIC_BATCH:-1}
MODEL_CACHE=${RIVET_MODEL_CACHE:-$HOME/.cache/rivet/models}
BUNDLE_MAX_MIB=${BUNDLE_MAX_MIB:-60}
ONLY=${ONLY:-}
PYTHON=${PYTHON:-/usr/bin/python3}

die() {
  echo "gpu-check.sh: $*" >&2
  exit 1
}
note() {
  echo "note: $*"
  echo "$*" >>"$BUNDLE/notes.txt"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
bytes_of() { du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
# One line, no tabs: a field of the case table.
field() { printf '%s' "$*" | tr '\t\n\r' '   ' | cut -c1-400; }

run_device_script() {
  local flavor=cuda
  [ "$LOCAL" = 1 ] && flavor=cpu
  echo
  echo "== tools/scripts/gpu-device-check.py --flavor $flavor $BUNDLE"
  "$PYTHON" "$ROOT/tools/scripts/gpu-device-check.py" --flavor "$flavor" \
    "$BUNDLE" "${DEVICE_ARGS[@]}"
}

if [ "$BUILD" = 0 ]; then
  [ "$LOCAL" = 1 ] || die "--no-build only makes sense with --local"
  [ -f "$BUNDLE/cases.json" ] || die "no bundle at $BUNDLE (run without --no-build)"
  run_device_script
  exit $?
fi

[ -x "$RIVET" ] || die "no rivet binary at $RIVET (build first, or set RIVET)"
[ -x "$RIVET_RUN" ] || die "no rivet-run binary at $RIVET_RUN (build the rivet-run target, or set RIVET_RUN)"
"$PYTHON" -c 'import json' 2>/dev/null || die "$PYTHON does not run (set PYTHON)"
RUN_HELP=$("$RIVET" run --help 2>&1)
[[ $RUN_HELP == *--save-inputs* ]] || die "$RIVET has no 'run --save-inputs': rebuild it"

mkdir -p "$BUNDLE" || die "cannot create $BUNDLE"
# The cases are rebuilt every time; lib/ keeps its compressed libraries.
rm -rf "$BUNDLE/conformance" "$BUNDLE/conformance.json"
rm -rf "$BUNDLE/cases" "$BUNDLE/cases.json" "$BUNDLE/cases.tsv" \
  "$BUNDLE/bench.tsv" "$BUNDLE/notes.txt" "$BUNDLE/rivet-run" \
  "$BUNDLE/logs" "$BUNDLE/torch_models"
mkdir -p "$BUNDLE/cases" "$BUNDLE/lib" "$BUNDLE/logs" "$BUNDLE/torch_models"
: >"$BUNDLE/notes.txt"

# The PyTorch definitions of the models (a few KiB): the device script
# builds its baselines from them, with the seeds of their exports.
cp tools/models/common.py tools/models/export_*.py "$BUNDLE/torch_models/" ||
  die "cannot copy tools/models"

# ---------------------------------------------------------------------------
# The runner and its libraries.
# ---------------------------------------------------------------------------
echo "== runner and libraries"
cp "$RIVET_RUN" "$BUNDLE/rivet-run" || die "cannot copy $RIVET_RUN"
strip --strip-debug "$BUNDLE/rivet-run" 2>/dev/null || true
# Libraries the GPU machine has in newer versions (glibc, the GCC runtime)
# stay behind: theirs are compatible with binaries built here.
is_system_lib() {
  case "$1" in
  linux-vdso.so* | ld-linux*.so* | libc.so* | libm.so* | libpthread.so* | \
    libdl.so* | librt.so* | libstdc++.so* | libgcc_s.so*) return 0 ;;
  *) return 1 ;;
  esac
}
declare -A WANTED_LIBS=()
LDD_OUT=$(ldd "$RIVET_RUN") || die "ldd $RIVET_RUN failed"
while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  is_system_lib "$name" && continue
  [ "$path" = "not" ] && die "$RIVET_RUN: library $name not found"
  WANTED_LIBS[$name]=$path
  src=$(readlink -f "$path")
  dst=$BUNDLE/lib/$name
  if [ "$(stat -c %s "$src")" -gt $((1 << 20)) ]; then
    # Big (oneDNN: ~40 MB, ~7 MB as xz): carried compressed. The .xz is
    # kept while its source is unchanged (xz -9 takes ~30 s here).
    stamp="$src $(stat -c '%s %Y' "$src")"
    if [ ! -f "$dst.xz" ] || [ "$(cat "$dst.xz.source" 2>/dev/null)" != "$stamp" ]; then
      echo "compressing $name ($(mib "$(stat -c %s "$src")") MiB) ..."
      if ! xz -9 -T0 -c "$src" >"$dst.xz.tmp"; then
        rm -f "$dst.xz.tmp"
        die "xz failed on $src"
      fi
      mv "$dst.xz.tmp" "$dst.xz"
      echo "$stamp" >"$dst.xz.source"
    fi
    rm -f "$dst"
  else
    rm -f "$dst.xz" "$dst.xz.source"
    cp "$src" "$dst" || die "cannot copy $src"
    case "$name" in librivet*) strip --strip-debug "$dst" 2>/dev/null || true ;; esac
  fi
done <<<"$LDD_OUT"
[ -n "${WANTED_LIBS[librivet_runtime.so]:-}" ] ||
  die "$RIVET_RUN does not load librivet_runtime.so (is it linked statically?)"
# Libraries of an earlier bundle that the runner no longer loads.
for f in "$BUNDLE"/lib/*; do
  [ -e "$f" ] || continue
  base=$(basename "$f")
  base=${base%.source}
  base=${base%.xz}
  [ -n "${WANTED_LIBS[$base]:-}" ] || rm -f "$f"
done
for f in "$BUNDLE"/lib/*; do
  case "$f" in *.source) continue ;; esac
  printf '  %-28s %8s MiB\n' "lib/$(basename "$f")" "$(mib "$(stat -c %s "$f")")"
done
echo "libraries: $(mib "$(bytes_of "$BUNDLE/lib")") MiB (carried), runner $(mib "$(stat -c %s "$BUNDLE/rivet-run")") MiB"

# ---------------------------------------------------------------------------
# The cases.
# ---------------------------------------------------------------------------
TSV=$BUNDLE/cases.tsv
printf 'name\tkind\tsource\trvx\tcompile_error\tcpu_rvx\tcpu_compile_error\tcase_dir\texpected_error\treference\trtol\tatol\tbench\n' >"$TSV"
# rivet check's default tolerance: |got - want| <= atol + rtol * |want|.
RTOL=1e-4
ATOL=1e-5
NUM_CASES=0
NUM_COMPILE_FAILED=0

# The error line of a log: its last "error:" line, else its last line.
error_of() {
  local line
  line=$(grep -a 'error' "$1" | tail -1)
  [ -n "$line" ] || line=$(tail -1 "$1")
  line=${line#error: }
  field "${line:-failed without a message}"
}

# compile SRC STEM FLAVOR EXTRA... -> cases/STEM.rvx (cuda) or
# cases/STEM.cpu.rvx (cpu); sets COMPILE_ERROR ("" on success) and RVX.
compile() {
  local src=$1 stem=$2 flavor=$3
  shift 3
  local out=cases/$stem.rvx args=$CUDA_TARGET_ARGS
  if [ "$flavor" = cpu ]; then
    out=cases/$stem.cpu.rvx
    args=$CPU_TARGET_ARGS
  fi
  local log=$BUNDLE/logs/$stem.$flavor.compile.log
  # shellcheck disable=SC2086 # the target flags are words
  if "$RIVET" compile "$src" -o "$BUNDLE/$out" $args "$@" >"$log" 2>&1; then
    COMPILE_ERROR=
    RVX=$out
  else
    COMPILE_ERROR=$(error_of "$log")
    RVX=
    rm -f "$BUNDLE/$out"
  fi
}

# Per source, compiled once (every data set of a model shares its .rvx).
declare -A DONE_CUDA=() DONE_CPU=() ERR_CUDA=() ERR_CPU=()
compile_both() {
  local src=$1 stem=$2
  if [ -z "${DONE_CUDA[$stem]+x}" ]; then
    compile "$src" "$stem" cuda
    DONE_CUDA[$stem]=$RVX
    ERR_CUDA[$stem]=$COMPILE_ERROR
    [ -n "$COMPILE_ERROR" ] && NUM_COMPILE_FAILED=$((NUM_COMPILE_FAILED + 1))
    compile "$src" "$stem" cpu
    DONE_CPU[$stem]=$RVX
    ERR_CPU[$stem]=$COMPILE_ERROR
  fi
}

# add_case NAME KIND SRC STEM RTOL ATOL RUN-ARGS...: the reference
# interpreter runs SRC on the inputs RUN-ARGS give, saving them and its
# outputs into cases/NAME/; then SRC is compiled (once per STEM).
add_case() {
  local name=$1 kind=$2 src=$3 stem=$4 rtol=$5 atol=$6
  shift 6
  if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then
    return
  fi
  local dir=cases/$name log=$BUNDLE/logs/$name.reference.log ref_error=
  mkdir -p "$BUNDLE/$dir"
  "$RIVET" run "$src" --executor interp "$@" \
    --save-inputs "$BUNDLE/$dir/inputs" \
    --output-dir "$BUNDLE/$dir/expected" >"$log" 2>&1
  local rc=$?
  [ $rc = 2 ] && die "rivet run refused its arguments for $name: $(cat "$log")"
  if [ $rc != 0 ]; then
    ref_error=$(error_of "$log")
    rm -rf "$BUNDLE/$dir/expected"
  fi
  compile_both "$src" "$stem"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" \
    "$kind" "${src#"$ROOT"/}" "${DONE_CUDA[$stem]}" "${ERR_CUDA[$stem]}" \
    "${DONE_CPU[$stem]}" "${ERR_CPU[$stem]}" "$dir" "$ref_error" interp \
    "$rtol" "$atol" 0 >>"$TSV"
  NUM_CASES=$((NUM_CASES + 1))
  local status="ok"
  [ -n "$ref_error" ] && status="reference fails: $ref_error"
  [ -n "${ERR_CUDA[$stem]}" ] && status="$status; cuda compile fails: ${ERR_CUDA[$stem]}"
  printf '  %-36s %s\n' "$name" "$status"
}

# --input NAME=FILE for every .npy in a folder (the name is the stem).
inputs_of() {
  local f
  for f in "$1"/*.npy; do
    [ -e "$f" ] || continue
    printf -- '--input\n%s=%s\n' "$(basename "$f" .npy)" "$f"
  done
}

echo "== committed models (tests/models), one case per data set"
for dir in tests/models/*/; do
  dir=${dir%/}
  model=$(basename "$dir")
  [ -f "$dir/model.onnx" ] || continue
  for ds in "$dir"/test_data_set_*/; do
    ds=${ds%/}
    [ -d "$ds/inputs" ] || continue
    mapfile -t args < <(inputs_of "$ds/inputs")
    add_case "$model.${ds##*_}" model "$ROOT/$dir/model.onnx" "$model" \
      "$RTOL" "$ATOL" "${args[@]}"
  done
done

# The agreement models (tests/tools/agreement_cli_test.cc) with that test's
# inputs: every executor must give the reference's outputs bit for bit, or
# its error.
declare -A AGREEMENT_INPUTS=(
  [gather_static_oob]="x=gather_x.npy i=gather_i_oob.npy"
  [split_sizes_bad]="x=split_x.npy"
  [slice_step_minint]="x=slice_x.npy"
  [reducemax_dynamic]="x=empty_rows_x.npy"
  [reducemin_dynamic]="x=empty_rows_x.npy"
  [reducemean_int_dynamic]="x=empty_rows_i.npy"
  [cast_nan_to_int]="x=cast_nan_x.npy"
)
# The CLI fixtures (tests/tools/onnx_cli_test.cc): random inputs, with the
# extents of their symbolic dimensions.
declare -A SHAPES=(
  [cli/passthrough]="input.1=5x3"
  [cli/select]="a=4 b=4"
)
echo "== other committed ONNX models (tests/models/*/*.onnx)"
for onnx in tests/models/*/*.onnx; do
  [ "$(basename "$onnx")" = model.onnx ] && continue
  group=$(basename "$(dirname "$onnx")")
  model=$(basename "$onnx" .onnx)
  args=()
  rtol=$RTOL atol=$ATOL
  if [ "$group" = agreement ] && [ -n "${AGREEMENT_INPUTS[$model]:-}" ]; then
    for a in ${AGREEMENT_INPUTS[$model]}; do
      args+=(--input "${a%%=*}=$ROOT/tests/models/agreement/${a#*=}")
    done
    rtol=0 atol=0
  else
    args=(--random-inputs --seed 0)
    for s in ${SHAPES[$group/$model]:-}; do
      args+=(--shape "$s")
    done
  fi
  add_case "$group.$model" "$group" "$ROOT/$onnx" "$group.$model" \
    "$rtol" "$atol" "${args[@]}"
done

echo "== test programs (tests/programs)"
for dir in tests/programs/*/; do
  dir=${dir%/}
  prog=$(basename "$dir")
  [ -f "$dir/program.rvir" ] || continue
  mapfile -t args < <(inputs_of "$dir/inputs")
  add_case "program.$prog" program "$ROOT/$dir/program.rvir" \
    "program.$prog" "$RTOL" "$ATOL" "${args[@]}"
done

# ---------------------------------------------------------------------------
# The benchmark models: per batch of BENCH_BATCHES an executable compiled for
# that shape only (--input-shape), then one for every batch; each while the
# bundle stays within its cap, so that the last ones are left out first.
# ---------------------------------------------------------------------------
TREE_BYTES=$(git ls-files -z -co --exclude-standard 2>/dev/null |
  xargs -0 du -cb 2>/dev/null | awk '$2 == "total" { s += $1 } END { print s + 0 }')
# A device call carries the working tree and the bundle, 64 MiB in all;
# CARRY_MARGIN_KIB (default 1024) is left for the tree to grow.
LIMIT=$((BUNDLE_MAX_MIB << 20))
CARRY_LEFT=$(((64 << 20) - (${CARRY_MARGIN_KIB:-1024} << 10) - TREE_BYTES))
[ "$CARRY_LEFT" -lt "$LIMIT" ] && LIMIT=$CARRY_LEFT

BENCH_TSV=$BUNDLE/bench.tsv
printf 'model\tbatch\trvx\tcompile_error\tcpu_rvx\tinput\tshape\n' >"$BENCH_TSV"
NUM_BENCH_EXES=0
# The CPU executables of the bench models that --local adds: not carried,
# so not counted against the cap.
LOCAL_BYTES=0

# bench_exe MODEL SRC STEM BATCH INPUT SHAPE COMPILE-ARGS...: compiles
# cases/STEM.rvx for CUDA (and with --local cases/STEM.cpu.rvx), keeps it
# while the bundle stays within its cap and records it in bench.tsv (a
# failed compile too). Sets BENCH_RVX and BENCH_CPU_RVX ("" when none)
# and BENCH_ERROR (the CUDA compile's error).
bench_exe() {
  local m=$1 src=$2 stem=$3 batch=$4 input=$5 shape=$6
  shift 6
  BENCH_RVX=
  BENCH_CPU_RVX=
  compile "$src" "$stem" cuda "$@"
  local rvx=$RVX err=$COMPILE_ERROR size
  BENCH_ERROR=$err
  if [ -n "$err" ]; then
    NUM_COMPILE_FAILED=$((NUM_COMPILE_FAILED + 1))
    note "$m: the CUDA compile of $stem failed: $err"
  fi
  if [ -n "$rvx" ]; then
    size=$(($(bytes_of "$BUNDLE") - LOCAL_BYTES))
    if [ "$size" -gt "$LIMIT" ]; then
      note "$m: $stem (batch $batch) left out: with it the bundle is $(mib "$size") MiB, over its $(mib "$LIMIT") MiB"
      rm -f "$BUNDLE/$rvx"
      return
    fi
    NUM_BENCH_EXES=$((NUM_BENCH_EXES + 1))
    if [ "$LOCAL" = 1 ]; then
      compile "$src" "$stem" cpu "$@"
      BENCH_CPU_RVX=$RVX
      [ -n "$RVX" ] && LOCAL_BYTES=$((LOCAL_BYTES + $(stat -c %s "$BUNDLE/$RVX")))
    fi
  fi
  BENCH_RVX=$rvx
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$batch" "$rvx" "$err" \
    "$BENCH_CPU_RVX" "$input" "$shape" >>"$BENCH_TSV"
  echo "  $m batch $batch: ${rvx:-no executable}${BENCH_CPU_RVX:+ and $BENCH_CPU_RVX} (input $input=$shape)"
}

# The elementwise chain whose bandwidth the device script measures (its
# input is made there: 256 MiB would not travel).
"$RIVET" compile tools/bench/elementwise_chain.rvir $CUDA_TARGET_ARGS \
  -o "$BUNDLE/cases/elementwise_chain.rvx" >/dev/null ||
  note "elementwise_chain: the CUDA compile failed"

# The ONNX conformance pass list, every kernel the GPU can run placed there
# (CONFORMANCE=1; ~25 MiB, so with no bench model beside it).
if [ "${CONFORMANCE:-0}" = 1 ]; then
  echo "== conformance pass list (compiled with --gpu-placement all)"
  "$PYTHON" tools/scripts/gpu-conformance-bundle.py "$BUNDLE" \
    ${CONFORMANCE_ONLY:+--only-file "$CONFORMANCE_ONLY"} ||
    note "conformance: tools/scripts/gpu-conformance-bundle.py failed"
fi

if [ "$BENCH" = 1 ] && [ -n "$BENCH_MODELS" ]; then
  any=
  [ "$BENCH_DYNAMIC_BATCH" = 1 ] && any=", and any batch"
  echo "== benchmark models ($BENCH_MODELS; batches $BENCH_BATCHES$any)"
  for m in $BENCH_MODELS; do
    if [ -n "$ONLY" ] && ! [[ $m =~ $ONLY ]]; then
      continue
    fi
    mdir=$MODEL_CACHE/$m
    if [ ! -f "$mdir/model.onnx" ]; then
      if "$PYTHON" -c 'import torch, torchvision, onnx' 2>/dev/null; then
        echo "exporting $m into $MODEL_CACHE ..."
        "$PYTHON" tools/models/export_all.py --large-only --only "$m" \
          --out "$MODEL_CACHE" >"$BUNDLE/logs/$m.export.log" 2>&1 ||
          note "$m: export failed: $(error_of "$BUNDLE/logs/$m.export.log")"
      else
        note "$m: skipped: not in the model cache ($mdir) and $PYTHON has no torch/torchvision to export it (export it where torch is: python3 tools/models/export_all.py --large-only --out DIR, then set RIVET_MODEL_CACHE=DIR)"
        continue
      fi
    fi
    ds=$mdir/test_data_set_0
    if [ ! -f "$mdir/model.onnx" ] || [ ! -d "$ds/inputs" ]; then
      continue
    fi
    # Its one input's shape in data set 0 (batch 1), from the export's meta.
    shape=$("$PYTHON" -c 'import json, sys
m = json.load(open(sys.argv[1]))
print(m["inputs"][0] + "=" + m["data_sets"][0][m["inputs"][0]])' "$mdir/meta.json" 2>/dev/null)
    [ -n "$shape" ] || shape="image=1x3x224x224"
    input=${shape%%=*}
    dims=${shape#*=}
    ds_batch=${dims%%x*} # the leading (batch) extent of data set 0
    item=${dims#*x}      # the rest: 3x224x224
    # Its correctness case: PyTorch's outputs on data set 0, with
    # tests/models/run_models_test.cc's tolerance, on the executable of
    # data set 0's batch, else on the one for any batch. Copied first, so
    # that the cap counts it.
    dir=cases/$m.bench
    mkdir -p "$BUNDLE/$dir"
    cp -r "$ds/inputs" "$ds/expected" "$BUNDLE/$dir/"
    case_rvx='' case_cpu_rvx='' case_error=''
    for b in $BENCH_BATCHES; do
      bench_exe "$m" "$mdir/model.onnx" "$m.b$b.bench" "$b" "$input" \
        "${b}x$item" --input-shape "$input=${b}x$item"
      if [ "$b" = "$ds_batch" ]; then
        case_rvx=$BENCH_RVX case_cpu_rvx=$BENCH_CPU_RVX case_error=$BENCH_ERROR
      fi
    done
    if [ "$BENCH_DYNAMIC_BATCH" = 1 ]; then
      bench_exe "$m" "$mdir/model.onnx" "$m.any.bench" any "$input" "Nx$item"
      if [ -z "$case_rvx" ]; then
        case_rvx=$BENCH_RVX case_cpu_rvx=$BENCH_CPU_RVX
        [ -n "$case_error" ] || case_error=$BENCH_ERROR
      fi
    fi
    [ -n "$case_rvx" ] && case_error=
    if [ -z "$case_rvx" ] && [ -z "$case_error" ]; then
      rm -rf "${BUNDLE:?}/$dir" # nothing kept (size): no case
      continue
    fi
    cpu_error="not built (size)"
    [ -n "$case_cpu_rvx" ] && cpu_error=
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m.bench" \
      bench "$mdir/model.onnx" "$case_rvx" "$case_error" "$case_cpu_rvx" \
      "$cpu_error" "$dir" "" pytorch 1e-4 1e-4 1 >>"$TSV"
    NUM_CASES=$((NUM_CASES + 1))
    echo "  $m.bench (correctness, data set 0): ${case_rvx:-no executable}"
  done
fi

# ---------------------------------------------------------------------------
# The manifest.
# ---------------------------------------------------------------------------
"$PYTHON" - "$BUNDLE" "$CUDA_TARGET_ARGS" "$CPU_TARGET_ARGS" \
  "$(git -C "$ROOT" describe --always --dirty 2>/dev/null)" "$BENCH_BATCHES" \
  "$LOCAL" <<'EOF' || die "cannot write the manifest"
import csv, json, os, re, sys, time, urllib.parse
bundle, cuda_args, cpu_args, commit, bench_batches, local = sys.argv[1:7]

def npys(d):
    p = os.path.join(bundle, d)
    return sorted(f for f in os.listdir(p) if f.endswith(".npy")) if os.path.isdir(p) else []

cases = []
with open(os.path.join(bundle, "cases.tsv"), newline="") as f:
    for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
        d = r["case_dir"]
        inputs_dir = os.path.join(d, "inputs")
        # Input name -> file. --save-inputs percent-encodes names that are
        # not plain; a file named with other than letters, digits, '.', '_'
        # and '-' ("ids:0.npy") is renamed, so that every name travels.
        inputs = {}
        for k, f in enumerate(npys(inputs_dir)):
            name = urllib.parse.unquote(f[:-4])
            if not re.fullmatch(r"[A-Za-z0-9._-]+", f):
                safe = f"input_{k}.npy"
                os.rename(os.path.join(bundle, inputs_dir, f), os.path.join(bundle, inputs_dir, safe))
                f = safe
            inputs[name] = os.path.join(inputs_dir, f)
        cases.append({
            "name": r["name"], "kind": r["kind"], "source": r["source"],
            "rvx": r["rvx"] or None, "compile_error": r["compile_error"] or None,
            "cpu_rvx": r["cpu_rvx"] or None,
            "cpu_compile_error": r["cpu_compile_error"] or None,
            "inputs": inputs,
            "inputs_saved": os.path.isdir(os.path.join(bundle, inputs_dir)),
            "expected_dir": os.path.join(d, "expected"),
            "expected_outputs": npys(os.path.join(d, "expected")),
            "expected_error": r["expected_error"] or None,
            "reference": r["reference"],
            "rtol": float(r["rtol"]), "atol": float(r["atol"]),
            "bench": r["bench"] == "1",
        })
# The bench models: per model its input, the batches to time and its
# executables (batch null: the one for any batch).
bench_models = {}
with open(os.path.join(bundle, "bench.tsv"), newline="") as f:
    for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
        m = bench_models.setdefault(r["model"], {
            "model": r["model"], "input": r["input"],
            "item_shape": [int(d) for d in r["shape"].split("x")[1:]],
            "batches": [int(b) for b in bench_batches.split()],
            "case": f"{r['model']}.bench", "executables": []})
        m["executables"].append({
            "batch": None if r["batch"] == "any" else int(r["batch"]),
            "rvx": r["rvx"] or None, "compile_error": r["compile_error"] or None,
            "cpu_rvx": r["cpu_rvx"] or None})
notes = open(os.path.join(bundle, "notes.txt")).read().splitlines()
manifest = {"version": 2, "created": time.strftime("%Y-%m-%d %H:%M:%S"),
            "commit": commit, "cuda_target_args": cuda_args,
            "cpu_target_args": cpu_args, "local": local == "1", "notes": notes,
            "cases": cases, "bench_models": list(bench_models.values())}
with open(os.path.join(bundle, "cases.json"), "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
EOF

SIZE=$(($(bytes_of "$BUNDLE") - LOCAL_BYTES))
echo
echo "bundle: $BUNDLE: $NUM_CASES cases, $NUM_BENCH_EXES bench executables, $NUM_COMPILE_FAILED CUDA compiles failed"
echo "size: $(mib "$SIZE") MiB (cap $(mib "$LIMIT") MiB; working tree $(mib "$TREE_BYTES") MiB; a device call carries 64 MiB in all)"
[ "$LOCAL_BYTES" -gt 0 ] &&
  echo "      and $(mib "$LOCAL_BYTES") MiB of CPU bench executables (--local): rebuild without --local before carrying it"
[ -s "$BUNDLE/notes.txt" ] && sed 's/^/note: /' "$BUNDLE/notes.txt"
[ "$SIZE" -gt "$LIMIT" ] && echo "warning: the bundle is over its cap" >&2
echo "on the GPU machine (device run, carry [\"${BUNDLE#"$ROOT"/}\"]):"
echo "  PYTHONUNBUFFERED=1 python3 tools/scripts/gpu-device-check.py ${BUNDLE#"$ROOT"/}"

if [ "$LOCAL" = 1 ]; then
  run_device_script
  exit $?
fi
