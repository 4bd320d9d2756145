//===- dynamic_to_static_test.cc - DynamicToStatic ------------------------===//
#include "support/PassTest.h"

#include "frontend/onnx/Importer.h"
#include "ir/Visitor.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

using namespace rivet;
using namespace rivet::ir;

namespace {

const std::vector<std::string> Passes = {"DynamicToStatic",
                                         "DeadCodeElimination"};

TEST(DynamicToStatic, ConstantShapeTensors) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "shape_tensors");
}

TEST(DynamicToStatic, ShapesComputedFromStaticTypes) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "computed_shape");
}

TEST(DynamicToStatic, DynamicShapesStay) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "dynamic_shape_stays");
}

TEST(DynamicToStatic, StaticElementsOfDynamicShapes) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "shape_elements");
}

TEST(DynamicToStatic, SlicePadSplit) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "slice_pad_split");
}

TEST(DynamicToStatic, SearchReduceOneHot) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "search_reduce");
}

TEST(DynamicToStatic, DftLengths) {
  test::expectTransformFiles(Passes, "DynamicToStatic", "dft");
}

/// @main of M with every symbolic or unknown extent of its parameters fixed
/// to Extent (what a user does by giving the batch size).
void fixInputExtents(Module &M, int64_t Extent) {
  const auto &Fn = *M.function("main")->as<FunctionNode>();
  std::vector<Var> Params;
  std::unordered_map<const VarNode *, Expr> Map;
  for (const Var &P : Fn.params) {
    const auto *T = P->typeAnnotation->as<TensorTypeNode>();
    std::vector<Dim> Dims;
    for (const Dim &D : *T->shape)
      Dims.push_back(D.isConst() ? D : Dim::constant(Extent));
    Params.push_back(var(P->nameHint, tensorType(Dims, T->dtype)));
    Map[P.get()] = Params.back();
  }
  M.addFunction("main", function(Params, substitute(Fn.body, Map), nullptr,
                                 Fn.typeParams, Fn.attrs));
  inferTypes(M);
}

/// Names of the data-dependent operators called anywhere in M.
std::vector<std::string> dynamicOps(const Module &M) {
  std::vector<std::string> Found;
  for (const std::string &Name : M.functionNames())
    postOrderVisit(M.function(Name), [&](const Expr &E) {
      const auto *C = E->as<CallNode>();
      const auto *O = C ? C->callee->as<OpNode>() : nullptr;
      if (!O)
        return;
      const std::string &N = O->name();
      if (N.find("_dyn") != std::string::npos ||
          N.find("dyn_") != std::string::npos || N == "max_unpool_to_shape")
        Found.push_back(N);
    });
  return Found;
}

/// Imports a model with its input extents fixed, runs the shape passes and
/// expects no data-dependent operator left and the same results.
void expectStaticModel(const std::string &Path) {
  Module M = frontend::importOnnxFile(Path);
  fixInputExtents(M, 2);
  Module After = test::runPassesOn(M, {"SimplifyInference", "SimplifyExpr",
                                       "DynamicToStatic", "FoldConstant",
                                       "DeadCodeElimination"});
  std::vector<std::string> Left = dynamicOps(After);
  if (!Left.empty()) {
    // Show where the first one is, with the bindings before it.
    std::string Text = printModule(After);
    size_t At = Text.find(Left[0] + "(");
    ADD_FAILURE() << Left.size() << " data-dependent calls left:\n"
                  << Text.substr(At > 1500 ? At - 1500 : 0, 2000);
  }
  test::expectSameResults(M, After, 1e-4, 1e-5);
}

TEST(DynamicToStatic, TransformerWithFixedExtentsIsStatic) {
  std::string Path =
      std::string(RIVET_SOURCE_DIR) + "/tests/models/transformer/model.onnx";
  Module M = frontend::importOnnxFile(Path);
  // As imported (dynamic seq and batch) the reshapes are data-dependent.
  EXPECT_FALSE(dynamicOps(M).empty());
  expectStaticModel(Path);
}

TEST(DynamicToStatic, Resnet18WithFixedBatchIsStatic) {
  const char *Cache = std::getenv("RIVET_MODEL_CACHE");
  std::string Dir =
      Cache ? Cache
            : std::string(std::getenv("HOME") ? std::getenv("HOME") : "") +
                  "/.cache/rivet/models";
  std::string Path = Dir + "/resnet18/model.onnx";
  if (!std::filesystem::exists(Path))
    GTEST_SKIP() << Path << " is not in the model cache";
  expectStaticModel(Path);
}

/// Operator calls in @main (for the record: what the passes removed).
size_t countCalls(const Module &M) {
  size_t N = 0;
  postOrderVisit(M.function("main"), [&](const Expr &E) {
    if (const auto *C = E->as<CallNode>())
      N += C->callee->kind == ExprKind::Op;
  });
  return N;
}

/// The six simplification passes in pipeline order keep a model's results,
/// with its dynamic extents as imported.
void expectSameModelResults(const std::string &Path) {
  Module M = frontend::importOnnxFile(Path);
  Module After = test::runPassesOn(M, {"SimplifyInference", "SimplifyExpr",
                                       "DynamicToStatic", "FoldConstant",
                                       "EliminateCommonSubexpr", "FoldConstant",
                                       "SimplifyExpr", "DeadCodeElimination"});
  std::cout << Path << ": " << countCalls(M) << " operator calls before, "
            << countCalls(After) << " after\n";
  EXPECT_LE(countCalls(After), countCalls(M));
  test::expectSameResults(M, After, 1e-4, 1e-5);
}

TEST(SimplificationPasses, TransformerKeepsItsResults) {
  expectSameModelResults(std::string(RIVET_SOURCE_DIR) +
                         "/tests/models/transformer/model.onnx");
}

} // namespace
