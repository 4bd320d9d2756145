//===- ExecutionLimits.h - Limits both executors share ----------*- C++ -*-===//
//
// The reference interpreter (ir::Interpreter) and the VM take the same
// limits, with the same defaults, and fail the same way on exceeding them,
// so that a program fails on both or on neither. The call depth counts the
// nested (non-tail) calls of functions in progress, @main's own frame
// included: a call in tail position replaces its caller's frame on both
// executors and does not count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>

namespace rivet {

struct ExecutionLimits {
  static constexpr size_t kDefaultMaxCallDepth = 100000;
  /// A call that would make more frames than this raises rivet::Error
  /// (callDepthError) instead of growing the frame stack without bound.
  size_t maxCallDepth = kDefaultMaxCallDepth;
};

/// The error of exceeding ExecutionLimits::maxCallDepth, on either executor
/// (each adds where it happened, as it does to its other errors).
inline std::string callDepthError(size_t MaxCallDepth) {
  return fmt::format("call stack overflow: more than {} nested calls (only "
                     "calls in tail position run in constant memory)",
                     MaxCallDepth);
}

} // namespace rivet
