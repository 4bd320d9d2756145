//===- ControlFlow.cc - ONNX If, Loop and Scan ----------------------------===//
//
// If becomes an `if` whose branches are the imported subgraphs. Loop and Scan
// become let-bound tail-recursive functions (the VM runs them in constant
// stack); scan outputs are accumulated in a List, newest first, and stacked
// once at the end with concat_list.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

Expr tupleOrSingle(std::vector<Expr> Outs) {
  return Outs.size() == 1 ? Outs[0] : ir::tuple(std::move(Outs));
}

std::vector<Expr> convertIf(NodeContext &C) {
  Expr Cond = toScalar(C.input(0));
  size_t N = C.numOutputs();
  auto importBranch = [&](const char *Name) {
    const onnx::GraphProto &G = C.attrGraph(Name);
    if ((size_t)G.output_size() != N)
      C.error("branch '{}' has {} outputs, the node has {}", Name,
              G.output_size(), N);
    GraphImporter Sub(C.graph().state(), &C.graph());
    return Sub.importGraph(G, {}, tupleOrSingle);
  };
  Expr Then = importBranch("then_branch");
  Expr Else = importBranch("else_branch");
  Expr If = ir::ifThenElse(Cond, Then, Else);
  if (N == 1)
    return {If};
  return C.bindTuple(If, N);
}
RIVET_REGISTER_ONNX_OP("If", 1, convertIf);

/// Loop(M?, cond?, v_initial...) with body(iter, cond, v...) ->
/// (cond, v..., scan...):
///   let %loop = fn (%i, %cond, %v..., %acc...) {
///     if (i < M && cond) { <body>; %loop(i + 1, cond', v'..., Cons(s, acc)...) }
///     else { (v..., concat_list(rev(acc), new_axis=1)...) }
///   };
///   %loop(0, cond0, v0..., Nil...)
std::vector<Expr> convertLoop(NodeContext &C) {
  const onnx::GraphProto &Body = C.attrGraph("body");
  if (C.numInputs() < 2)
    C.error("Loop needs at least the inputs M and cond (possibly empty)");
  size_t N = C.numInputs() - 2;
  if ((size_t)Body.input_size() != N + 2)
    C.error("the body has {} inputs, expected {} (iteration, condition and "
            "{} loop-carried values)",
            Body.input_size(), N + 2, N);
  if ((size_t)Body.output_size() < N + 1)
    C.error("the body has {} outputs, expected at least {}",
            Body.output_size(), N + 1);
  size_t K = (size_t)Body.output_size() - 1 - N;

  Expr MaxTrip = C.hasInput(0) ? C.bind(toScalar(C.input(0)), "max_trip") : nullptr;
  bool HasCond = C.hasInput(1);
  ir::Var Iter = ir::var("i", ir::scalarType(DType::Int64));
  ir::Var Cond = ir::var("cond", ir::scalarType(DType::Bool));
  std::vector<ir::Var> Vs, Accs;
  for (size_t I = 0; I < N; ++I)
    Vs.push_back(GraphImporter::makeVar(Body.input((int)I + 2).name()));
  for (size_t I = 0; I < K; ++I)
    Accs.push_back(ir::var("acc" + std::to_string(I)));
  ir::Var Loop = ir::var("loop");

  GraphImporter Sub(C.graph().state(), &C.graph());
  std::vector<Expr> BodyInputs = {Iter, Cond};
  BodyInputs.insert(BodyInputs.end(), Vs.begin(), Vs.end());
  Expr Continue = Sub.importGraph(Body, BodyInputs, [&](std::vector<Expr> Outs) {
    std::vector<Expr> Args = {
        ir::callOp("add", {Iter, ir::constant(Tensor::scalar<int64_t>(1))}),
        HasCond ? toScalar(Outs[0]) : Expr(Cond)};
    for (size_t I = 0; I < N; ++I)
      Args.push_back(Outs[1 + I]);
    for (size_t I = 0; I < K; ++I)
      Args.push_back(C.construct("Cons", {Outs[1 + N + I], Accs[I]}));
    return ir::call(Loop, Args);
  });

  std::vector<Expr> Results(Vs.begin(), Vs.end());
  for (size_t I = 0; I < K; ++I)
    Results.push_back(stackList(C.callGlobal("rev", {Accs[I]})));
  Expr Done = ir::tuple(Results);

  Expr Test;
  if (MaxTrip)
    Test = ir::callOp("less", {Iter, MaxTrip});
  if (HasCond)
    Test = Test ? ir::callOp("logical_and", {Test, Cond}) : Expr(Cond);
  Expr FnBody = Test ? ir::ifThenElse(Test, Continue, Done) : Continue;

  std::vector<ir::Var> Params = {Iter, Cond};
  Params.insert(Params.end(), Vs.begin(), Vs.end());
  Params.insert(Params.end(), Accs.begin(), Accs.end());
  std::vector<Expr> Init = {
      ir::constant(Tensor::scalar<int64_t>(0)),
      HasCond ? toScalar(C.input(1)) : ir::constant(Tensor::scalar<bool>(true))};
  for (size_t I = 0; I < N; ++I)
    Init.push_back(C.input(2 + I));
  for (size_t I = 0; I < K; ++I)
    Init.push_back(C.construct("Nil", {}));
  Expr Result = ir::let(Loop, ir::function(Params, FnBody),
                        ir::call(Loop, Init));
  return C.bindTuple(Result, N + K);
}
RIVET_REGISTER_ONNX_OP("Loop", 1, convertLoop);

/// Scan (opset 9+): N state variables and M scan inputs; the body sees one
/// slice of every scan input per step and yields new states and K scan
/// output slices. A tail-recursive function over the step index.
std::vector<Expr> convertScan(NodeContext &C) {
  const onnx::GraphProto &Body = C.attrGraph("body");
  int64_t M = C.attrInt("num_scan_inputs");
  int64_t NumIn = (int64_t)C.numInputs();
  int64_t N = NumIn - M;
  if (M < 1 || N < 0)
    C.error("num_scan_inputs is {}, but the node has {} inputs", M, NumIn);
  if (Body.input_size() != NumIn)
    C.error("the body has {} inputs, expected {}", Body.input_size(), NumIn);
  int64_t K = Body.output_size() - N;
  if (K < 0)
    C.error("the body has {} outputs, fewer than the {} states",
            Body.output_size(), N);
  auto InAxes = C.attrInts("scan_input_axes", std::vector<int64_t>(M, 0));
  auto InDirs = C.attrInts("scan_input_directions", std::vector<int64_t>(M, 0));
  auto OutAxes = C.attrInts("scan_output_axes", std::vector<int64_t>(K, 0));
  auto OutDirs = C.attrInts("scan_output_directions", std::vector<int64_t>(K, 0));
  if ((int64_t)InAxes.size() != M || (int64_t)InDirs.size() != M ||
      (int64_t)OutAxes.size() != K || (int64_t)OutDirs.size() != K)
    C.error("scan axes/directions attributes do not match the numbers of "
            "scan inputs ({}) and outputs ({})", M, K);

  std::vector<Expr> Xs;
  for (int64_t J = 0; J < M; ++J)
    Xs.push_back(C.bind(C.input((size_t)(N + J)), "scan_in"));
  // The number of steps: the extent of the first scan input's scan axis.
  Expr Len = C.bind(ir::callOp("dim_size", {Xs[0]}, Attrs{{"axis", InAxes[0]}}),
                    "steps");

  ir::Var T = ir::var("t", ir::scalarType(DType::Int64));
  std::vector<ir::Var> States, Accs;
  for (int64_t I = 0; I < N; ++I)
    States.push_back(GraphImporter::makeVar(Body.input((int)I).name()));
  for (int64_t I = 0; I < K; ++I)
    Accs.push_back(ir::var("acc" + std::to_string(I)));
  ir::Var Scan = ir::var("scan");

  std::vector<Expr> BodyInputs(States.begin(), States.end());
  for (int64_t J = 0; J < M; ++J) {
    Expr Index = T;
    if (InDirs[J]) // reverse: len - 1 - t
      Index = ir::callOp("subtract",
                         {ir::callOp("subtract", {Len, ir::constant(Tensor::scalar<int64_t>(1))}), T});
    BodyInputs.push_back(ir::callOp("take", {Xs[J], Index},
                                    Attrs{{"axis", InAxes[J]}}));
  }
  GraphImporter Sub(C.graph().state(), &C.graph());
  Expr Continue = Sub.importGraph(Body, BodyInputs, [&](std::vector<Expr> Outs) {
    std::vector<Expr> Args = {
        ir::callOp("add", {T, ir::constant(Tensor::scalar<int64_t>(1))})};
    for (int64_t I = 0; I < N; ++I)
      Args.push_back(Outs[I]);
    for (int64_t I = 0; I < K; ++I)
      Args.push_back(C.construct("Cons", {Outs[N + I], Accs[I]}));
    return ir::call(Scan, Args);
  });
  std::vector<Expr> Results(States.begin(), States.end());
  for (int64_t I = 0; I < K; ++I) {
    // Accumulated newest first: a forward output is reversed once.
    Expr L = OutDirs[I] ? Expr(Accs[I]) : C.callGlobal("rev", {Accs[I]});
    Results.push_back(stackList(L, OutAxes[I]));
  }
  Expr FnBody = ir::ifThenElse(ir::callOp("less", {T, Len}), Continue,
                               ir::tuple(Results));
  std::vector<ir::Var> Params = {T};
  Params.insert(Params.end(), States.begin(), States.end());
  Params.insert(Params.end(), Accs.begin(), Accs.end());
  std::vector<Expr> Init = {ir::constant(Tensor::scalar<int64_t>(0))};
  for (int64_t I = 0; I < N; ++I)
    Init.push_back(C.input((size_t)I));
  for (int64_t I = 0; I < K; ++I)
    Init.push_back(C.construct("Nil", {}));
  Expr Result = ir::let(Scan, ir::function(Params, FnBody), ir::call(Scan, Init));
  return C.bindTuple(Result, (size_t)(N + K));
}
RIVET_REGISTER_ONNX_OP("Scan", 9, convertScan);

} // namespace
} // namespace rivet::frontend
