//===- StreamingStores.h - Stores that write around the cache ---*- C++ -*-===//
//
// An ordinary store first reads its destination cache line (read for
// ownership), so a kernel streaming a large output through the caches moves
// each output byte twice: a copy-like kernel reads 2 bytes for every byte
// it writes. A non-temporal store writes whole lines straight to memory,
// which pays off only when the output cannot stay cached for its consumer
// anyway. Lowering marks such stores; the LLVM backend (EmitLLVM.cc) emits
// them as aligned non-temporal vector stores on x86.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"

#include <cstdint>

namespace rivet::codegen {

/// The fewest output bytes worth streaming: 16 MB, half the 32 MB L3 of the
/// machines Rivet is tuned on and more than the share of a server L3 one
/// core gets (glibc's memcpy turns to non-temporal stores at 3/4 of it);
/// together with its inputs such an output no longer fits the cache, so a
/// consumer would read it from memory even after ordinary stores.
constexpr int64_t kStreamingStoreMinBytes = int64_t(16) << 20;

/// The fewest bytes one run of the innermost loop must write to stream:
/// 1 KB (16 cache lines). Each run starts with ordinary stores up to the
/// next 64-byte boundary, so that the non-temporal ones are aligned; short
/// rows would leave little to stream and write partial lines.
constexpr int64_t kStreamingRowMinBytes = 1024;

/// Marks the streaming stores of K (LoopStmtNode::streaming): a store into
/// an output buffer that is the whole body of an innermost loop (vectorized,
/// or parallel and vectorized per chunk) running over the buffer's last
/// axis, indexed by that loop's variable on the last axis and by outer
/// variables only on the others, with no other store into the buffer and
/// no load from it; and whose buffer is large enough (streamingCondition),
/// statically or, for symbolic shapes, possibly.
void markStreamingStores(LoopKernel &K);

/// A bool expression over K's size parameters: whether the output Buffer
/// is at least kStreamingStoreMinBytes and its rows (last axis) at least
/// kStreamingRowMinBytes. A constant when the buffer's shape is static.
LoopExpr streamingCondition(const LoopKernel &K, int Buffer);

} // namespace rivet::codegen
