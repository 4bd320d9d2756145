//===- RecurrentSteps.h - Vector loops of float32 RNN layers ---*- C++ -*-===//
//
// One direction of an lstm, gru or rnn call in float32 (FastRecurrent.cc
// packs the operands and calls it): the input projection of every step as
// one GEMM, then per step one small GEMM of the batch's states by R and the
// fused gate arithmetic. RecurrentSteps.inc is compiled three times, for
// AVX-512, AVX2 + FMA and the baseline (RecurrentSteps*.cc), each whole TU
// for its ISA: GCC lowers the vector code of helpers compiled for the
// baseline before inlining them into a target_clones function, which made
// every broadcast eight scalar inserts. The AVX-512 compilation runs the
// GEMMs and gates on 16-float vectors, the others on 8.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/ops/RecurrentLayer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rivet::kernels::recurrent {

/// Everything one direction of a call reads and writes. Packed operands
/// have gate stride Hp (H padded to 8) and row stride GW = gates * Hp.
struct DirectionJob {
  RnnKind Kind;
  int64_t S, N, I, H, Hp, GW;
  bool Reverse, Layout, InputForget, LinearBeforeReset, DefaultActs;
  float Clip; // 0: none
  const Activation *Acts;
  const float *X;       // the call's x, [S, N, I] or [N, S, I]
  const float *Wt, *Rt; // [I][GW], [H][GW]
  const float *Bx;      // [GW]: added to the input projection
  const float *Bh;      // [GW] added to R h (gru's Rb_h), or null
  const float *Peep;    // [3][Hp] (i, o, f) or null
  const int64_t *Lens;  // [N], each in [0, S]
  int64_t BlockSteps;   // steps projected at a time
  float *Xb;            // [BlockSteps * N][I] scratch: their rows of x
  float *Gx;            // [BlockSteps * N][GW] scratch: their projection
  float *Gh;            // [N][GW] scratch
  float *Hs, *Cs, *Rh;  // [N][Hp] state (in: initial; out: final), scratch
  float *Hs2;           // [N][Hp] scratch: the state a fused lstm step writes
  float *Y;             // the call's y ([S, D, N, H] or [N, S, D, H])
  int64_t Dir, NumDir;
  /// A layer of lstm_stack on a thread of its own: how many steps of x the
  /// layer below has written (null: all of x), and where this layer
  /// publishes how many steps of y it has written (null: no layer above).
  const std::atomic<int64_t> *XReady = nullptr;
  std::atomic<int64_t> *YDone = nullptr;
};

/// Waits until Ready reaches Steps (the layer below's progress).
void waitForSteps(const std::atomic<int64_t> &Ready, int64_t Steps);

/// Runs J on this CPU's best instruction set, or the one set below.
void runDirection(const DirectionJob &J);

/// Which compilation runDirection uses: the best this CPU runs (Auto), or
/// one named (tests run every one the host has against the reference).
enum class RecurrentIsa { Auto, Base, Avx2, Avx512 };
/// False, changing nothing, when this CPU cannot run Isa.
bool setRecurrentIsa(RecurrentIsa Isa);

// The three compilations of RecurrentSteps.inc.
void runDirectionAvx512(const DirectionJob &J);
void runDirectionAvx2(const DirectionJob &J);
void runDirectionBase(const DirectionJob &J);

} // namespace rivet::kernels::recurrent
