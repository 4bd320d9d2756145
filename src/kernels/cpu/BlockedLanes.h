//===- BlockedLanes.h - 16-float vectors of our NCHW16c kernels -*- C++ -*-===//
//
// Internal to src/kernels/cpu: the vector type of the direct conv kernels
// (BlockedDirectConv.cc, PointwiseDepthwiseConv.cc) and the elementwise
// tail they apply in registers before the one store of each output vector.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/cpu/BlockedDirectConv.h"

#include <cstdint>

namespace rivet::blocked {

/// Sixteen floats: one output channel block of one pixel; at float
/// alignment and may_alias (loads from float arrays). Only inside the
/// target-specific clones, never a parameter or a result.
typedef float Lanes __attribute__((vector_size(64), aligned(4), may_alias));

inline const Lanes &lanesAt(const float *P) {
  return *reinterpret_cast<const Lanes *>(P);
}

constexpr int64_t kBlock = 16, kBlockSquare = kBlock * kBlock;
using TailOp = DirectConvArgs::TailOp;

/// The tail Ops[0, NumOps) on the R vectors V of output block Ob, the first
/// at element At of the output (Full operands are laid out as the output,
/// R vectors apart by kBlock): one op at a time over the R vectors (the
/// switch is paid per op, not per vector).
template <int R>
__attribute__((always_inline)) inline void applyTail(const TailOp *Ops,
                                                     int NumOps, Lanes (&V)[R],
                                                     int64_t Ob, int64_t At) {
  for (int T = 0; T < NumOps; ++T) {
    const TailOp &O = Ops[T];
    if (O.kind == TailOp::Kind::Clamp) {
      Lanes Lo = Lanes{} + O.lo, Hi = Lanes{} + O.hi;
#pragma GCC unroll 28
      for (int Rr = 0; Rr < R; ++Rr) { // NaN stays, as in std::max(x, 0)
        V[Rr] = V[Rr] < Lo ? Lo : V[Rr];
        V[Rr] = V[Rr] > Hi ? Hi : V[Rr];
      }
      continue;
    }
    bool Add = O.kind == TailOp::Kind::Add;
    if (O.form != OperandForm::Full) {
      Lanes X = O.form == OperandForm::Scalar ? Lanes{} + *O.data
                                              : lanesAt(O.data + Ob * kBlock);
#pragma GCC unroll 28
      for (int Rr = 0; Rr < R; ++Rr)
        V[Rr] = Add ? V[Rr] + X : V[Rr] * X;
      continue;
    }
#pragma GCC unroll 28
    for (int Rr = 0; Rr < R; ++Rr) {
      const Lanes &X = lanesAt(O.data + At + Rr * kBlock);
      V[Rr] = Add ? V[Rr] + X : V[Rr] * X;
    }
  }
}

} // namespace rivet::blocked
