//===- ReductionInterchange.h - Reductions outside the row loop -*- C++ -*-===//
//
// Lowering computes each output element on its own: a matmul's element is a
// dot product whose reduction loop is the innermost one. When that loop
// reads an operand across rows (q[r, i] of p @ q), the vectorized reduction
// gathers strided elements, while the output's row loop would read the same
// operand contiguously. This pass swaps the two loops, accumulating in the
// output row itself: out[.., i] = init, then for each r a vectorizable
// out[.., i] += x(r, i), then the element's epilogue (bias, activation).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"

namespace rivet::codegen {

/// Rewrites, anywhere in K, a serial output loop `for i { acc = init; for r
/// ... { acc = acc + x } out[.., i] = f(acc) }` into `for i { out[.., i] =
/// init }; for r ... { for i { out[.., i] = out[.., i] + x } }; for i {
/// out[.., i] = f(out[.., i]) }` when x reads some operand across its rows
/// (a reduction variable in an index other than the last) and reads i only
/// as (an offset of) the last index, and the output accumulates in the
/// local's own dtype. Each element is then summed in the order of r, as the
/// reference does. Run before the innermost loops are marked vectorized.
void interchangeReductions(LoopKernel &K);

} // namespace rivet::codegen
