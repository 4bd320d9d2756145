//===- call_depth_test.cc - One call-depth limit for both executors -------===//
//
// The interpreter and the VM count nested (non-tail) calls alike, take the
// limit from the same ExecutionLimits, and report exceeding it with the same
// error: a recursion of depth N runs under a limit of N frames and fails
// under N - 1, on both, at every opt level.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

// @main's call of @down is a tail call (it replaces @main's frame); each
// further @down is nested in an add: @down(n) needs n + 1 frames.
const char *const Down = R"(
def @down(%n: Tensor[(), int64]) {
  if (equal(%n, 0i64)) { 0i64 } else { add(@down(subtract(%n, 1i64)), 1i64) }
}
def @main(%n: Tensor[(), int64]) { @down(%n) }
)";

/// The error of running @main(N) under Limits ("" when it succeeds, after
/// checking the result).
std::string interpError(const Module &M, int64_t N,
                        const ExecutionLimits &Limits) {
  Interpreter I(M);
  I.setLimits(Limits);
  try {
    Value R = I.call("main", {Value(Tensor::scalar<int64_t>(N))});
    EXPECT_EQ(R.tensor().elementAsDouble(0), (double)N);
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

std::string vmError(const Module &M, int Level, int64_t N,
                    const ExecutionLimits &Limits) {
  vm::CompileOptions O;
  O.optLevel = Level;
  vm::VirtualMachine VM(vm::compile(M, O));
  VM.setLimits(Limits);
  try {
    vm::ObjectRef R =
        VM.invoke("main", {vm::makeTensor(Tensor::scalar<int64_t>(N))});
    EXPECT_EQ(vm::asTensor(R, "the result").elementAsDouble(0), (double)N);
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

TEST(CallDepth, SameLimitAndErrorOnBothExecutors) {
  Module M = parseModule(Down);
  inferTypes(M);
  const ExecutionLimits L{.maxCallDepth = 40};
  const std::string Want = callDepthError(40);
  EXPECT_EQ(interpError(M, 39, L), "");
  std::string E = interpError(M, 40, L);
  EXPECT_NE(E.find(Want), std::string::npos) << E;
  EXPECT_NE(E.find("@down"), std::string::npos) << E;
  for (int Level = 0; Level <= 3; ++Level) {
    SCOPED_TRACE(::testing::Message() << "-O" << Level);
    EXPECT_EQ(vmError(M, Level, 39, L), "");
    E = vmError(M, Level, 40, L);
    EXPECT_NE(E.find(Want), std::string::npos) << E;
  }
}

TEST(CallDepth, TailCallsDoNotCount) {
  Module M = parseModule(R"(
def @loop(%n: Tensor[(), int64], %acc: Tensor[(), int64]) {
  if (equal(%n, 0i64)) { %acc } else { @loop(subtract(%n, 1i64), add(%acc, 1i64)) }
}
def @main(%n: Tensor[(), int64]) { @loop(%n, 0i64) }
)");
  inferTypes(M);
  const ExecutionLimits L{.maxCallDepth = 2};
  EXPECT_EQ(interpError(M, 1000, L), "");
  EXPECT_EQ(vmError(M, 3, 1000, L), "");
}

TEST(CallDepth, TheDefaultIsShared) {
  EXPECT_EQ(ExecutionLimits{}.maxCallDepth, 100000u);
  Module M = parseModule(Down);
  inferTypes(M);
  Interpreter I(M);
  EXPECT_EQ(I.limits().maxCallDepth, ExecutionLimits{}.maxCallDepth);
  vm::VirtualMachine VM(vm::compile(M));
  EXPECT_EQ(VM.limits().maxCallDepth, ExecutionLimits{}.maxCallDepth);
}

} // namespace
