//===- EmitCuda.h - Loop kernel -> CUDA C++ source --------------*- C++ -*-===//
//
// The CUDA backend's first half: a LoopKernel (the same loop IR the LLVM
// backend compiles) as the source of one __global__ function, for NVRTC.
// The leading perfectly nested loops (the output's axes) are collapsed into
// one index that a grid-stride loop hands to the threads, so one launch
// covers every size; the rest of the nest (reductions included) runs in
// each thread. Where the rest is loops a warp can share (reductions along
// a row, a softmax's or a norm's loops), each index goes to a warp instead:
// its 32 lanes stride the row's loops (reading neighbouring elements) and
// combine their partial reductions with shuffles; the launch then wants 32
// threads per index. A kernel whose top level is not one loop nest (a
// reduction to one value) runs on one thread. Dynamic extents are kernel
// parameters. Arithmetic follows the loop IR's meaning exactly, as the LLVM
// emitter does: integers wrap, min/max propagate NaN, round is half to even.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"

#include <string>

namespace rivet::codegen::cuda {

/// One translation unit with a kernel per entry of Ks: extern "C"
/// __global__ void <K.name>(...), whose parameters are, in order, one
/// pointer per buffer (the inputs const, then the output) and one int64 per
/// size parameter.
std::string emitCudaSource(const std::vector<LoopKernel> &Ks);

/// Whether K's CUDA form spreads its work over the grid (it has a leading
/// nest of independent loops); otherwise one thread runs it all.
bool runsInParallel(const LoopKernel &K);

} // namespace rivet::codegen::cuda
