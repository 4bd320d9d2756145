//===- ControlFlow.cc - ONNX If, Loop and Scan ----------------------------===//
//
// If becomes an `if` whose branches are the imported subgraphs. Loop and Scan
// become let-bound tail-recursive functions (the VM runs them in constant
// stack); scan outputs are accumulated in a List, newest first, and stacked
// once at the end with concat_list. A Loop's carried tensors keep the
// constant extents the body declares for them (static kernels in the step).
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

Expr int64Const(int64_t V) { return ir::constant(Tensor::scalar<int64_t>(V)); }

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

/// The type of a loop-carried tensor as the body declares it, when that
/// fixes an extent (a constant; the others named, none `?`) and the initial
/// value's declared type does not contradict it; else null (inferred).
/// Without it the state's type is the join of the initial value's and the
/// body result's, and an exporter's fresh symbol on the result (torch's
/// `Loop..._dim_1`) makes a constant extent unknown: the step's matmuls
/// would then have a dynamic reduction extent.
ir::Type loopCarriedType(NodeContext &C, const onnx::ValueInfoProto &In,
                         size_t NodeInput) {
  if (!In.has_type() || !In.type().has_tensor_type())
    return nullptr;
  ir::Type T =
      typeFromProto(In.type(), C.graph().state().what + ": " + In.name());
  const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
  if (!TT || !TT->shape)
    return nullptr;
  bool AnyConst = false;
  for (const ir::Dim &D : *TT->shape) {
    if (D.isAny())
      return nullptr;
    AnyConst |= D.isConst();
  }
  if (!AnyConst)
    return nullptr;
  if (ir::Type Init = C.declaredInputType(NodeInput)) {
    const auto *IT = Init->as<ir::TensorTypeNode>();
    if (!IT || IT->dtype != TT->dtype)
      return nullptr;
    if (IT->shape) {
      if (IT->shape->size() != TT->shape->size())
        return nullptr;
      for (size_t A = 0; A < TT->shape->size(); ++A) {
        const ir::Dim &D = (*TT->shape)[A], &E = (*IT->shape)[A];
        if (D.isConst() && E.isConst() && D.value != E.value)
          return nullptr;
      }
    }
  }
  return T;
}

/// Declared with the constant extents of Known where Declared has a symbol
/// or `?`; Declared unchanged when the two disagree (type inference reports
/// it), Known when nothing is declared.
ir::Type refinedType(const ir::Type &Declared, const ir::Type &Known) {
  if (!Declared)
    return Known;
  const auto *D = Declared->as<ir::TensorTypeNode>();
  const auto *K = Known->as<ir::TensorTypeNode>();
  if (!D || !K || D->dtype != K->dtype || !K->shape)
    return Declared;
  if (!D->shape)
    return Known;
  if (D->shape->size() != K->shape->size())
    return Declared;
  std::vector<ir::Dim> Dims;
  for (size_t A = 0; A < D->shape->size(); ++A) {
    const ir::Dim &DD = (*D->shape)[A], &KD = (*K->shape)[A];
    if (DD.isConst() && KD.isConst() && DD.value != KD.value)
      return Declared;
    Dims.push_back(DD.isConst() || !KD.isConst() ? DD : KD);
  }
  return ir::tensorType(std::move(Dims), D->dtype);
}

/// Whether the body's condition output is its condition input passed
/// through (Identity nodes) or the constant true: the loop then runs
/// exactly max(M, 0) times when it starts.
bool conditionPassesThrough(const onnx::GraphProto &Body) {
  std::string Name = Body.output(0).name();
  for (int Hops = 0; Hops <= Body.node_size(); ++Hops) {
    if (Name == Body.input(1).name())
      return true;
    const onnx::NodeProto *Producer = nullptr;
    for (const onnx::NodeProto &N : Body.node())
      for (const std::string &O : N.output())
        if (O == Name)
          Producer = &N;
    if (!Producer)
      return false;
    if (Producer->op_type() == "Identity" && Producer->input_size() == 1) {
      Name = Producer->input(0);
      continue;
    }
    if (Producer->op_type() == "Constant" && Producer->attribute_size() == 1 &&
        Producer->attribute(0).name() == "value" &&
        Producer->attribute(0).has_t()) {
      const onnx::TensorProto &T = Producer->attribute(0).t();
      return T.data_type() == onnx::TensorProto::BOOL &&
                     T.int32_data_size() == 1
                 ? T.int32_data(0) != 0
                 : T.data_type() == onnx::TensorProto::BOOL &&
                       T.raw_data().size() == 1 && T.raw_data()[0] != 0;
    }
    return false;
  }
  return false;
}

/// The bytes one step adds to the scan outputs, when the body declares
/// their element types with constant extents.
std::optional<int64_t> scanBytesPerStep(const onnx::GraphProto &Body,
                                        size_t First, size_t K) {
  int64_t Bytes = 0;
  for (size_t I = First; I < First + K; ++I) {
    const onnx::TypeProto &T = Body.output((int)I).type();
    if (!T.has_tensor_type() || !T.tensor_type().has_shape())
      return std::nullopt;
    int64_t N = (int64_t)dtypeSize(
        dtypeFromOnnx(T.tensor_type().elem_type(), Body.output((int)I).name()));
    for (const onnx::TensorShapeProto::Dimension &D :
         T.tensor_type().shape().dim()) {
      if (!D.has_dim_value() || D.dim_value() < 0 ||
          (D.dim_value() && N > INT64_MAX / D.dim_value()))
        return std::nullopt;
      N *= D.dim_value();
    }
    if (Bytes > INT64_MAX - N)
      return std::nullopt;
    Bytes += N;
  }
  return Bytes;
}

/// Loop(M?, cond?, v_initial...) with body(iter, cond, v...) ->
/// (cond, v..., scan...):
///   let %loop = fn (%i, %cond, %v..., %acc...) {
///     if (i < M && cond) { <body>; %loop(i + 1, cond', v'..., Cons(s, acc)...)
///     } else { (v..., concat_list(rev(acc), new_axis=1)...) }
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
    C.error("the body has {} outputs, expected at least {}", Body.output_size(),
            N + 1);
  size_t K = (size_t)Body.output_size() - 1 - N;

  Expr MaxTrip =
      C.hasInput(0) ? C.bind(toScalar(C.input(0)), "max_trip") : nullptr;
  bool HasCond = C.hasInput(1);
  // A loop that will run exactly M times stacks M steps of its scan outputs:
  // when that cannot fit in memory, fail before the first step rather than
  // after filling the memory. The bound becomes 0 when cond is false at the
  // start (the loop does not run; `i < 0` keeps it so).
  if (MaxTrip && K > 0 && conditionPassesThrough(Body))
    if (std::optional<int64_t> Each = scanBytesPerStep(Body, 1 + N, K)) {
      Expr Trips = HasCond ? ir::callOp("where", {toScalar(C.input(1)), MaxTrip,
                                                  int64Const(0)})
                           : MaxTrip;
      Attrs A;
      A.set("bytes_each", *Each);
      const onnx::NodeProto &Node = C.node();
      // A malformed node may have neither a name nor an output.
      A.set("what", fmt::format("the scan outputs of Loop {}",
                                !Node.name().empty() ? "'" + Node.name() + "'"
                                : Node.output_size()
                                    ? "with output '" + Node.output(0) + "'"
                                    : std::string("(unnamed)")));
      MaxTrip = C.bind(ir::callOp("require_memory", {Trips}, A), "max_trip");
    }
  ir::Var Iter = ir::var("i", ir::scalarType(DType::Int64));
  ir::Var Cond = ir::var("cond", ir::scalarType(DType::Bool));
  std::vector<ir::Var> Vs, Accs;
  std::vector<ir::Type> CarriedTypes;
  for (size_t I = 0; I < N; ++I) {
    CarriedTypes.push_back(loopCarriedType(C, Body.input((int)I + 2), 2 + I));
    Vs.push_back(GraphImporter::makeVar(Body.input((int)I + 2).name(),
                                        CarriedTypes.back()));
  }
  for (size_t I = 0; I < K; ++I)
    Accs.push_back(ir::var("acc" + std::to_string(I)));
  ir::Var Loop = ir::var("loop");

  // A loop-carried optional whose body yields the plain value (ONNX lets a
  // sequence flow into an optional): wrap it in Some for the next
  // iteration, and unwrap the final value.
  std::vector<bool> Rewrap(N);
  for (size_t I = 0; I < N; ++I)
    Rewrap[I] = Body.input((int)I + 2).type().has_optional_type() &&
                Body.output((int)I + 1).has_type() &&
                !Body.output((int)I + 1).type().has_optional_type();

  GraphImporter Sub(C.graph().state(), &C.graph());
  std::vector<Expr> BodyInputs = {Iter, Cond};
  BodyInputs.insert(BodyInputs.end(), Vs.begin(), Vs.end());
  Expr Continue =
      Sub.importGraph(Body, BodyInputs, [&](std::vector<Expr> Outs) {
        std::vector<Expr> Args = {ir::callOp("add", {Iter, int64Const(1)}),
                                  HasCond ? toScalar(Outs[0]) : Expr(Cond)};
        for (size_t I = 0; I < N; ++I)
          Args.push_back(Rewrap[I] ? C.construct("Some", {Outs[1 + I]})
                                   : Outs[1 + I]);
        for (size_t I = 0; I < K; ++I)
          Args.push_back(C.construct("Cons", {Outs[1 + N + I], Accs[I]}));
        return ir::call(Loop, Args);
      });

  std::vector<Expr> Results;
  for (size_t I = 0; I < N; ++I) {
    if (!Rewrap[I]) {
      Results.push_back(Vs[I]);
      continue;
    }
    ir::Var X = ir::var("value");
    Results.push_back(ir::match(Vs[I], {{ir::PatternNode::constructor(
                                             C.module().findConstructor("Some"),
                                             {ir::PatternNode::bind(X)}),
                                         X}}));
  }
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
  std::vector<Expr> Init = {int64Const(0),
                            HasCond ? toScalar(C.input(1))
                                    : ir::constant(Tensor::scalar<bool>(true))};
  for (size_t I = 0; I < N; ++I)
    Init.push_back(C.input(2 + I));
  for (size_t I = 0; I < K; ++I)
    Init.push_back(C.construct("Nil", {}));
  Expr Result =
      ir::let(Loop, ir::function(Params, FnBody), ir::call(Loop, Init));
  std::vector<Expr> Outs = C.bindTuple(Result, N + K);
  // A final value is the initial one or a body result: it has the carried
  // type, whose constant extents beat the exporter's symbols.
  for (size_t I = 0; I < N; ++I)
    if (CarriedTypes[I] && C.hasOutput(I)) {
      const std::string &Name = C.node().output((int)I);
      Outs[I] =
          C.bind(Outs[I], Name,
                 refinedType(C.graph().declaredType(Name), CarriedTypes[I]));
    }
  return Outs;
}
RIVET_REGISTER_ONNX_OP("Loop", 1, convertLoop);

/// The attributes of a Scan that say how it walks its inputs and outputs.
struct ScanLayout {
  std::vector<int64_t> inAxes, inDirs, outAxes, outDirs;
};

/// One scan over States (N) and scan inputs Xs (M) with Body; returns a
/// tuple of the N final states and the K stacked scan outputs:
///   let %scan = fn (%t, %s..., %acc...) {
///     if (t < steps) { <body on slices t>; %scan(t + 1, s'..., Cons(y,
///     acc)...) } else { (s..., concat_list(rev(acc), new_axis=1)...) }
///   };
/// It binds nothing outside the expression it returns, so it can sit inside
/// another loop (Scan-8's walk over the batch).
Expr buildScan(NodeContext &C, const onnx::GraphProto &Body,
               const std::vector<Expr> &InitStates,
               const std::vector<Expr> &Ins, const ScanLayout &L) {
  size_t N = InitStates.size(), M = Ins.size();
  size_t K = (size_t)Body.output_size() - N;
  std::vector<ir::Var> Xs;
  for (size_t J = 0; J < M; ++J)
    Xs.push_back(ir::var("scan_in" + std::to_string(J)));
  // The number of steps: the extent of the first scan input's scan axis.
  ir::Var Len = ir::var("steps");
  ir::Var T = ir::var("t", ir::scalarType(DType::Int64));
  std::vector<ir::Var> States, Accs;
  for (size_t I = 0; I < N; ++I)
    States.push_back(GraphImporter::makeVar(Body.input((int)I).name()));
  for (size_t I = 0; I < K; ++I)
    Accs.push_back(ir::var("acc" + std::to_string(I)));
  ir::Var Scan = ir::var("scan");

  std::vector<Expr> BodyInputs(States.begin(), States.end());
  for (size_t J = 0; J < M; ++J) {
    Expr Index = T;
    if (L.inDirs[J]) // reverse: steps - 1 - t
      Index = ir::callOp("subtract",
                         {ir::callOp("subtract", {Len, int64Const(1)}), T});
    BodyInputs.push_back(
        ir::callOp("take", {Xs[J], Index}, Attrs{{"axis", L.inAxes[J]}}));
  }
  GraphImporter Sub(C.graph().state(), &C.graph());
  Expr Continue =
      Sub.importGraph(Body, BodyInputs, [&](std::vector<Expr> Outs) {
        std::vector<Expr> Args = {ir::callOp("add", {T, int64Const(1)})};
        for (size_t I = 0; I < N; ++I)
          Args.push_back(Outs[I]);
        for (size_t I = 0; I < K; ++I)
          Args.push_back(C.construct("Cons", {Outs[N + I], Accs[I]}));
        return ir::call(Scan, Args);
      });
  std::vector<Expr> Results(States.begin(), States.end());
  for (size_t I = 0; I < K; ++I) {
    // Accumulated newest first: a forward output is reversed once.
    Expr Acc = L.outDirs[I] ? Expr(Accs[I]) : C.callGlobal("rev", {Accs[I]});
    Results.push_back(stackList(Acc, L.outAxes[I]));
  }
  Expr FnBody = ir::ifThenElse(ir::callOp("less", {T, Len}), Continue,
                               ir::tuple(Results));
  std::vector<ir::Var> Params = {T};
  Params.insert(Params.end(), States.begin(), States.end());
  Params.insert(Params.end(), Accs.begin(), Accs.end());
  std::vector<Expr> Init = {int64Const(0)};
  Init.insert(Init.end(), InitStates.begin(), InitStates.end());
  for (size_t I = 0; I < K; ++I)
    Init.push_back(C.construct("Nil", {}));
  Expr Result =
      ir::let(Scan, ir::function(Params, FnBody), ir::call(Scan, Init));
  Result = ir::let(
      Len, ir::callOp("dim_size", {Xs[0]}, Attrs{{"axis", L.inAxes[0]}}),
      Result);
  for (size_t J = M; J-- > 0;)
    Result = ir::let(Xs[J], Ins[J], Result);
  return Result;
}

/// Reads the counts of a Scan node: N states, M scan inputs, K outputs.
void scanCounts(NodeContext &C, const onnx::GraphProto &Body, int64_t NumIn,
                int64_t &N, int64_t &M, int64_t &K) {
  M = C.attrInt("num_scan_inputs");
  N = NumIn - M;
  if (M < 1 || N < 0)
    C.error("num_scan_inputs is {}, but the node has {} state and scan inputs",
            M, NumIn);
  if (Body.input_size() != NumIn)
    C.error("the body has {} inputs, expected {}", Body.input_size(), NumIn);
  K = Body.output_size() - N;
  if (K < 0)
    C.error("the body has {} outputs, fewer than the {} states",
            Body.output_size(), N);
}

void checkLayout(NodeContext &C, const ScanLayout &L, int64_t M, int64_t K) {
  if ((int64_t)L.inAxes.size() != M || (int64_t)L.inDirs.size() != M ||
      (int64_t)L.outAxes.size() != K || (int64_t)L.outDirs.size() != K)
    C.error("scan axes/directions attributes do not match the numbers of "
            "scan inputs ({}) and outputs ({})",
            M, K);
}

/// Scan (opset 9+): N state variables and M scan inputs; the body sees one
/// slice of every scan input per step and yields new states and K scan
/// output slices.
std::vector<Expr> convertScan(NodeContext &C) {
  const onnx::GraphProto &Body = C.attrGraph("body");
  int64_t N, M, K;
  scanCounts(C, Body, (int64_t)C.numInputs(), N, M, K);
  ScanLayout L{
      C.attrInts("scan_input_axes", std::vector<int64_t>(M, 0)),
      C.attrInts("scan_input_directions", std::vector<int64_t>(M, 0)),
      C.attrInts("scan_output_axes", std::vector<int64_t>(K, 0)),
      C.attrInts("scan_output_directions", std::vector<int64_t>(K, 0))};
  checkLayout(C, L, M, K);
  std::vector<Expr> States, Ins;
  for (int64_t I = 0; I < N; ++I)
    States.push_back(C.input((size_t)I));
  for (int64_t J = 0; J < M; ++J)
    Ins.push_back(C.input((size_t)(N + J)));
  return C.bindTuple(buildScan(C, Body, States, Ins, L), (size_t)(N + K));
}
RIVET_REGISTER_ONNX_OP("Scan", 9, convertScan);

/// Scan-8: every input has a leading batch axis and the scan axis is 1. The
/// batch is walked by an outer tail-recursive function that runs one scan
/// per batch entry and stacks the results along axis 0. Per-entry sequence
/// lengths (the optional first input) are not supported.
std::vector<Expr> convertScan8(NodeContext &C) {
  const onnx::GraphProto &Body = C.attrGraph("body");
  if (C.hasInput(0))
    C.error("the sequence_lens input is not supported");
  int64_t N, M, K;
  scanCounts(C, Body, (int64_t)C.numInputs() - 1, N, M, K);
  ScanLayout L{std::vector<int64_t>(M, 0),
               C.attrInts("directions", std::vector<int64_t>(M, 0)),
               std::vector<int64_t>(K, 0), std::vector<int64_t>(K, 0)};
  checkLayout(C, L, M, K);
  std::vector<Expr> Inputs;
  for (int64_t I = 0; I < N + M; ++I)
    Inputs.push_back(C.bind(C.input((size_t)I + 1), "scan8_in"));
  Expr Batch =
      C.bind(ir::callOp("dim_size", {Inputs[N]}, Attrs{{"axis", int64_t(0)}}),
             "batch");
  ir::Var B = ir::var("b", ir::scalarType(DType::Int64));
  std::vector<ir::Var> Accs;
  for (int64_t I = 0; I < N + K; ++I)
    Accs.push_back(ir::var("batch_acc" + std::to_string(I)));
  ir::Var Walk = ir::var("walk_batch");

  std::vector<Expr> States, Ins;
  for (int64_t I = 0; I < N + M; ++I)
    (I < N ? States : Ins)
        .push_back(ir::callOp("take", {Inputs[(size_t)I], B},
                              Attrs{{"axis", int64_t(0)}}));
  ir::Var R = ir::var("per_batch");
  std::vector<Expr> Next = {ir::callOp("add", {B, int64Const(1)})};
  std::vector<Expr> Done;
  for (int64_t I = 0; I < N + K; ++I) {
    Next.push_back(
        C.construct("Cons", {ir::tupleGetItem(R, I), Accs[(size_t)I]}));
    Done.push_back(stackList(C.callGlobal("rev", {Accs[(size_t)I]}), 0));
  }
  Expr Step =
      ir::let(R, buildScan(C, Body, States, Ins, L), ir::call(Walk, Next));
  std::vector<ir::Var> Params = {B};
  Params.insert(Params.end(), Accs.begin(), Accs.end());
  Expr Fn = ir::function(Params, ir::ifThenElse(ir::callOp("less", {B, Batch}),
                                                Step, ir::tuple(Done)));
  std::vector<Expr> Init = {int64Const(0)};
  for (int64_t I = 0; I < N + K; ++I)
    Init.push_back(C.construct("Nil", {}));
  return C.bindTuple(ir::let(Walk, Fn, ir::call(Walk, Init)), (size_t)(N + K));
}
RIVET_REGISTER_ONNX_OP("Scan", 8, convertScan8);

} // namespace
} // namespace rivet::frontend
