//===- CodegenTestUtil.h - Differential tests of generated kernels -*- C++ -*-//
//
// Builds a module whose @main calls one primitive function, lowers that
// function to a loop kernel, JIT-compiles it once and runs it for several
// assignments of the symbolic extents, comparing every result with the
// reference interpreter on seeded random inputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LowerPrimitive.h"
#include "codegen/CodegenBackend.h"
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/Random.h"

#include <cctype>
#include <gtest/gtest.h>
#include <map>

namespace rivet::test {

/// One JIT for the whole test binary (kernel names are made unique).
inline codegen::JitCompiler &testJit() {
  static codegen::JitCompiler Jit;
  return Jit;
}

/// @main(%x0: T0, ...) { fn (%p0: T0, ..., Primitive=1) { Body }(%x0, ...) }
inline std::string primitiveModuleText(const std::vector<std::string> &Types,
                                       const std::string &Body) {
  std::string MainParams, FnParams, Args;
  for (size_t I = 0; I < Types.size(); ++I) {
    MainParams += fmt::format("%x{}: {}, ", I, Types[I]);
    FnParams += fmt::format("%p{}: {}, ", I, Types[I]);
    Args += fmt::format("{}%x{}", I ? ", " : "", I);
  }
  if (!MainParams.empty())
    MainParams.resize(MainParams.size() - 2);
  return fmt::format("def @main({}) {{\n  fn ({}Primitive=1) {{\n    {}\n  "
                     "}}({})\n}}\n",
                     MainParams, FnParams, Body, Args);
}

/// The type-checked module of primitiveModuleText(Types, Body).
inline ir::Module parsePrimitive(const std::vector<std::string> &Types,
                                 const std::string &Body) {
  ir::Module M = ir::parseModule(primitiveModuleText(Types, Body), "<test>");
  ir::inferTypes(M);
  return M;
}

/// How many times Sub occurs in S (printed kernels, IR text).
inline size_t countOccurrences(const std::string &S, const std::string &Sub) {
  size_t N = 0;
  for (size_t P = S.find(Sub); P != std::string::npos; P = S.find(Sub, P + 1))
    ++N;
  return N;
}

/// The primitive function literal that @main of M calls.
inline ir::Expr primitiveOf(const ir::Module &M) {
  const auto &Main = *M.function("main")->as<ir::FunctionNode>();
  const auto *C = Main.body->as<ir::CallNode>();
  EXPECT_TRUE(C && C->callee->as<ir::FunctionNode>());
  return C ? C->callee : nullptr;
}

/// Lowers the primitive function of a one-call module; fails the test when
/// codegen refuses it.
inline codegen::LoweredKernel lowerOrFail(const ir::Module &M,
                                          const std::string &Name) {
  codegen::LoweringResult R = codegen::lowerPrimitive(primitiveOf(M), Name);
  if (!R.ok()) {
    ADD_FAILURE() << "lowering refused: " << R.unsupported;
    return {};
  }
  return *R.lowered;
}

/// The runtime services the test helpers pass to kernels (a test may swap
/// in its own and must restore it).
inline const RivetKernelRuntime *&testRuntime() {
  static const RivetKernelRuntime *Runtime = &kernelRuntime();
  return Runtime;
}

/// Sizes of the symbolic extents for one run; "?" is every unknown extent.
using SizeMap = std::map<std::string, int64_t>;

inline std::string uniqueKernelName(const std::string &Stem) {
  static int Counter = 0;
  std::string S = "k" + std::to_string(Counter++) + "_";
  for (char C : Stem)
    S += std::isalnum((unsigned char)C) ? C : '_';
  return S;
}

/// Seeded random inputs for the parameters of @main of M with the symbolic
/// extents of S.
inline std::vector<Tensor> randomInputs(const ir::Module &M, const SizeMap &S,
                                        uint64_t Seed) {
  const auto &Main = *M.function("main")->as<ir::FunctionNode>();
  std::vector<Tensor> Inputs;
  for (const ir::Var &P : Main.params) {
    const auto *TT = P->checkedType->as<ir::TensorTypeNode>();
    Shape Sh;
    for (const ir::Dim &D : *TT->shape)
      Sh.push_back(D.isConst()    ? D.value
                   : D.isSymbol() ? S.at(D.name)
                                  : S.at("?"));
    Inputs.push_back(randomTensor(Sh, TT->dtype, Seed++));
  }
  return Inputs;
}

/// Runs Fn (the compiled kernel of L, lowered from @main of M) on Inputs
/// and compares its output with the interpreter running @main (NaNs must
/// match NaNs).
inline void expectRunOnInputsMatchesInterpreter(
    const ir::Module &M, const codegen::LoweredKernel &L,
    RivetKernelFn Fn, const std::vector<Tensor> &Inputs,
    double Rtol = 1e-5, double Atol = 1e-6) {
  ir::Interpreter Interp(M);
  std::vector<ir::Value> Args;
  std::vector<std::vector<int64_t>> Shapes;
  for (const Tensor &T : Inputs) {
    Args.push_back(T);
    Shapes.push_back(T.shape());
  }
  Tensor Expected = Interp.call("main", Args).tensor();
  Tensor Out = Tensor::empty(Expected.shape(), Expected.dtype());
  Shapes.push_back(Expected.shape());
  std::vector<void *> Buffers;
  for (const Tensor &T : Inputs)
    Buffers.push_back(T.rawData());
  Buffers.push_back(Out.rawData());
  std::vector<int64_t> Dims = codegen::sizeParamValues(L, Shapes);
  Fn(Buffers.data(), Dims.data(), testRuntime());
  EXPECT_TRUE(allClose(Out, Expected, Rtol, Atol))
      << L.kernel.name << " for shape " << shapeToString(Expected.shape());
}

/// Runs Fn on seeded random inputs with the symbolic extents of S and
/// compares its output with the interpreter running @main.
inline void expectRunMatchesInterpreter(const ir::Module &M,
                                        const codegen::LoweredKernel &L,
                                        RivetKernelFn Fn,
                                        const SizeMap &S, uint64_t Seed,
                                        double Rtol = 1e-5,
                                        double Atol = 1e-6) {
  expectRunOnInputsMatchesInterpreter(M, L, Fn, randomInputs(M, S, Seed), Rtol,
                                      Atol);
}

/// Parses, lowers and JIT-compiles the case once, then runs it for every
/// size map and compares with the interpreter.
inline void expectKernelMatches(const std::vector<std::string> &Types,
                                const std::string &Body,
                                const std::vector<SizeMap> &Sizes,
                                double Rtol = 1e-5, double Atol = 1e-6) {
  std::string Text = primitiveModuleText(Types, Body);
  SCOPED_TRACE(Text);
  ir::Module M = ir::parseModule(Text, "<codegen test>");
  ir::inferTypes(M);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName(Body));
  if (L.kernel.name.empty())
    return;
  SCOPED_TRACE(codegen::printLoopKernel(L.kernel));
  RivetKernelFn Fn = testJit().compile(L.kernel);
  // Each run draws fresh inputs: one seed per parameter and run.
  size_t NumParams = M.function("main")->as<ir::FunctionNode>()->params.size();
  uint64_t Seed = 11;
  for (const SizeMap &S : Sizes) {
    expectRunMatchesInterpreter(M, L, Fn, S, Seed, Rtol, Atol);
    Seed += NumParams;
  }
}

} // namespace rivet::test
