//===- PassTest.h - Text-in/text-out and differential pass tests -*- C++
//-*-===//
//
// A pass test parses a module, runs passes on it (verifier after each), and
// compares the result with an expected module up to renaming. It also runs
// @main of the module before and after on seeded random inputs with the
// reference interpreter: a rewrite must not change what the program means.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "ir/TypeInference.h"
#include "ir/transforms/Pass.h"
#include "kernels/Random.h"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace rivet::test {

/// The contents of tests/transforms/data/<Rel>.
inline std::string readPassData(const std::string &Rel) {
  std::string Path =
      std::string(RIVET_SOURCE_DIR) + "/tests/transforms/data/" + Rel;
  std::ifstream In(Path);
  if (!In)
    ADD_FAILURE() << "cannot read " << Path;
  std::stringstream S;
  S << In.rdbuf();
  return S.str();
}

/// Parses Text and infers its types.
inline ir::Module parseTyped(const std::string &Text,
                             const std::string &Name = "<test>") {
  ir::Module M = ir::parseModule(Text, Name);
  ir::inferTypes(M);
  return M;
}

/// Runs Passes on a copy of M at OptLevel with the verifier after each pass.
inline ir::Module runPassesOn(const ir::Module &M,
                              const std::vector<std::string> &Passes,
                              int OptLevel = 3) {
  ir::Module Out = M;
  ir::PassContext Ctx;
  Ctx.optLevel = OptLevel;
  Ctx.verifyEach = true;
  for (auto &P : Passes)
    Ctx.enabled.insert(P);
  ir::runPasses(Out, Passes, Ctx);
  return Out;
}

/// Random inputs for @main's tensor parameters; symbolic or unknown
/// dimensions take the value SymbolicExtent.
inline std::vector<ir::Value> randomMainInputs(const ir::Module &M,
                                               uint64_t Seed = 7,
                                               int64_t SymbolicExtent = 3) {
  std::vector<ir::Value> Args;
  const auto &Fn = *M.function("main")->as<ir::FunctionNode>();
  for (const ir::Var &P : Fn.params) {
    const ir::Type &T = P->checkedType ? P->checkedType : P->typeAnnotation;
    const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
    if (!TT || !TT->hasKnownRank()) {
      ADD_FAILURE() << "@main parameter %" << P->nameHint
                    << " is not a ranked tensor";
      return {};
    }
    Shape Sh;
    for (const ir::Dim &D : *TT->shape)
      Sh.push_back(D.isConst() ? D.value : SymbolicExtent);
    Args.push_back(randomTensor(Sh, TT->dtype, Seed++));
  }
  return Args;
}

/// Flattens a value into its tensors (tuples and ADTs in order).
inline void flattenTensors(const ir::Value &V, std::vector<Tensor> &Out) {
  if (V.isTensor())
    Out.push_back(V.tensor());
  else
    for (auto &F : V.fields())
      flattenTensors(F, Out);
}

/// @main of Before and After give the same results on seeded random inputs.
inline void expectSameResults(const ir::Module &Before, const ir::Module &After,
                              double Rtol = 1e-5, double Atol = 1e-5,
                              uint64_t Seed = 7) {
  std::vector<ir::Value> Args = randomMainInputs(Before, Seed);
  ir::Interpreter IB(Before), IA(After);
  std::vector<Tensor> RB, RA;
  flattenTensors(IB.call("main", Args), RB);
  flattenTensors(IA.call("main", Args), RA);
  ASSERT_EQ(RB.size(), RA.size());
  for (size_t I = 0; I < RB.size(); ++I)
    EXPECT_TRUE(allClose(RA[I], RB[I], Rtol, Atol))
        << "result " << I << " differs after the passes";
}

/// The functions a test text defines (the prelude left out: passes rewrite
/// it too, and an expected text cannot spell its rewritten form) are
/// structurally equal, and neither module has others.
inline bool sameUserFunctions(const ir::Module &A, const ir::Module &B) {
  auto UserNames = [](const ir::Module &M) {
    std::vector<std::string> Names;
    for (const std::string &N : M.functionNames())
      if (!ir::isPreludeName(N))
        Names.push_back(N);
    std::sort(Names.begin(), Names.end());
    return Names;
  };
  std::vector<std::string> NA = UserNames(A), NB = UserNames(B);
  if (NA != NB)
    return false;
  for (const std::string &N : NA)
    if (!ir::structuralEqual(A.function(N), B.function(N)))
      return false;
  return true;
}

/// Runs Passes on BeforeText and expects ExpectedText (up to renaming), and
/// the same results on random inputs. Returns the transformed module.
inline ir::Module expectTransform(const std::vector<std::string> &Passes,
                                  const std::string &BeforeText,
                                  const std::string &ExpectedText,
                                  int OptLevel = 3) {
  ir::Module Before = parseTyped(BeforeText, "before");
  ir::Module After = runPassesOn(Before, Passes, OptLevel);
  ir::Module Expected = parseTyped(ExpectedText, "expected");
  EXPECT_TRUE(sameUserFunctions(After, Expected))
      << ir::structuralDiff(After, Expected) << "\n--- got:\n"
      << ir::printModule(After) << "\n--- expected:\n"
      << ir::printModule(Expected);
  expectSameResults(Before, After);
  return After;
}

/// The same, reading data/<Dir>/<Case>.rvir and
/// data/<Dir>/<Case>.expected.rvir.
inline ir::Module expectTransformFiles(const std::vector<std::string> &Passes,
                                       const std::string &Dir,
                                       const std::string &Case,
                                       int OptLevel = 3) {
  return expectTransform(Passes, readPassData(Dir + "/" + Case + ".rvir"),
                         readPassData(Dir + "/" + Case + ".expected.rvir"),
                         OptLevel);
}

} // namespace rivet::test
