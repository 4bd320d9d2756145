//===- RNN.cc - lstm, gru and rnn: ONNX recurrent layers ------------------===//
#include "ir/ops/RelationUtil.h"
#include "kernels/LstmStack.h"

namespace rivet::ir {
namespace {

/// The relation of lstm (8 inputs, 3 outputs), gru and rnn (6 inputs, 2
/// outputs): (Y, Y_h[, Y_c]) with ONNX shapes. Optional inputs with zero
/// elements are absent.
template <OpName Name, size_t NumIn, int64_t Gates>
Type recurrentRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, NumIn);
  std::string Dir = OpAttrs(Op, A).getString("direction");
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    fail("{}: direction must be forward, reverse or bidirectional, got '{}'",
         Op, Dir);
  int64_t NumDir = Dir == "bidirectional" ? 2 : 1;
  std::optional<int64_t> Hidden = optInt(A, "hidden_size");
  if (Hidden && *Hidden <= 0)
    fail("{}: hidden_size must be positive, got {}", Op, *Hidden);
  bool Layout = OpAttrs(Op, A).getInt("layout") != 0;
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &W = tensorArg(Op, Args, 1);
  const TensorTypeNode &R = tensorArg(Op, Args, 2);
  requireFloat(Op, X, 0);
  requireSameDType(Op, X, W, 1);
  requireSameDType(Op, X, R, 2);
  for (size_t I = 0; I < 3; ++I) {
    const TensorTypeNode &T = tensorArg(Op, Args, I);
    if (T.shape && T.shape->size() != 3)
      failArg(I, "{}: {} must have rank 3, got {}", Op,
              I == 0   ? "x"
              : I == 1 ? "w"
                       : "r",
              typeStr(T));
  }
  for (size_t I = 3; I < NumIn; ++I) {
    const TensorTypeNode &T = tensorArg(Op, Args, I);
    // An empty placeholder stands for an absent input of any dtype.
    if (T.shape && T.shape->size() == 1 && (*T.shape)[0].isConst() &&
        (*T.shape)[0].value == 0)
      continue;
    if (I == 4)
      requireIndex(Op, T, I);
    else if (T.dtype != X.dtype)
      failArg(I, "{}: must have the dtype of x ({}), got {}", Op,
              dtypeName(X.dtype), typeStr(T));
  }
  Dim Seq = Dim::any(), Batch = Dim::any(), H = Dim::any();
  if (X.shape) {
    Seq = (*X.shape)[Layout ? 1 : 0];
    Batch = (*X.shape)[Layout ? 0 : 1];
  }
  if (Hidden)
    H = Dim::constant(*Hidden);
  else if (R.shape)
    H = (*R.shape)[2];
  auto CheckDim = [&](const TensorTypeNode &T, size_t Arg, size_t Axis,
                      const Dim &Want, const char *What) {
    if (!T.shape)
      return;
    if (!mergeEqualDim((*T.shape)[Axis], Want))
      failArg(Arg, "{}: {} is {}, expected {}", Op, What, typeStr(T),
              Want.str());
  };
  CheckDim(W, 1, 0, Dim::constant(NumDir), "the direction count of w");
  CheckDim(R, 2, 0, Dim::constant(NumDir), "the direction count of r");
  if (H.isConst()) {
    CheckDim(W, 1, 1, Dim::constant(Gates * H.value), "w");
    CheckDim(R, 2, 1, Dim::constant(Gates * H.value), "r");
    CheckDim(R, 2, 2, H, "r");
  }
  if (X.shape && W.shape)
    CheckDim(W, 1, 2, (*X.shape)[2], "the input size of w");
  Dim ND = Dim::constant(NumDir);
  Type Y = Layout ? tensorType({Batch, Seq, ND, H}, X.dtype)
                  : tensorType({Seq, ND, Batch, H}, X.dtype);
  Type HT = Layout ? tensorType({Batch, ND, H}, X.dtype)
                   : tensorType({ND, Batch, H}, X.dtype);
  std::vector<Type> Fields = {Y, HT};
  if (Gates == 4)
    Fields.push_back(HT);
  return tupleType(std::move(Fields));
}

/// The relation of lstm_stack (x, then w, r, b, initial_h, initial_c per
/// layer): each layer's as a forward lstm call of its own, fed the previous
/// layer's Y with the directions axis squeezed. Errors name the layer and
/// the stack's argument.
Type lstmStackRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("lstm_stack", A);
  const size_t Layers = lstm_stack::layers(Args.size());
  if (!Layers)
    fail("lstm_stack: expects x and five operands per layer (w, r, b, "
         "initial_h, initial_c), got {} arguments",
         Args.size());
  if (anyUndecided(Args))
    return nullptr;
  Type X = Args[0];
  std::vector<Type> Fields;
  for (size_t L = 0; L < Layers; ++L) {
    DType DT = tensorArg("lstm_stack", Args, 0).dtype;
    std::vector<Type> LayerArgs(8, tensorType({Dim::constant(0)}, DT));
    LayerArgs[0] = X;
    LayerArgs[4] = tensorType({Dim::constant(0)}, DType::Int32);
    for (size_t Op = 0; Op < lstm_stack::OperandsPerLayer; ++Op)
      LayerArgs[lstm_stack::kLstmInput[Op]] =
          Args[lstm_stack::argument(L, (lstm_stack::Operand)Op)];
    Type T;
    try {
      T = recurrentRel<"lstm", 8, 4>(LayerArgs, Attrs{});
    } catch (const ArgError &E) {
      // The stack's argument behind lstm's: x is the stack's x or the
      // layer below (named by its w).
      size_t Arg = L == 0 ? 0 : lstm_stack::argument(L - 1, lstm_stack::W);
      for (size_t Op = 0; Op < lstm_stack::OperandsPerLayer; ++Op)
        if (lstm_stack::kLstmInput[Op] == E.ArgIndex)
          Arg = lstm_stack::argument(L, (lstm_stack::Operand)Op);
      failArg(Arg, "lstm_stack layer {}: {}", L, E.what());
    } catch (const Error &E) {
      fail("lstm_stack layer {}: {}", L, E.what());
    }
    const auto &Tuple = static_cast<const TupleTypeNode &>(*T);
    // Y [seq, 1, batch, hidden] is the next layer's x [seq, batch, hidden].
    const auto &Y = static_cast<const TensorTypeNode &>(*Tuple.fields[0]);
    X = makeTensor(Y.shape ? std::optional<std::vector<Dim>>(std::vector<Dim>{
                                 (*Y.shape)[0], (*Y.shape)[2], (*Y.shape)[3]})
                           : std::nullopt,
                   Y.dtype);
    Fields.insert(Fields.end(), Tuple.fields.begin(), Tuple.fields.end());
  }
  return tupleType(std::move(Fields));
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "lstm",
    "ONNX LSTM over (x, w, r, b, sequence_lens, initial_h, initial_c, p);\n"
    "returns (Y, Y_h, Y_c). Optional inputs with zero elements are absent.",
    8, recurrentRel<"lstm", 8, 4>, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "lstm_stack",
    "Forward lstm layers with default activations, each fed the previous\n"
    "one's Y: (x, then w, r, b, initial_h, initial_c per layer); returns\n"
    "(Y, Y_h, Y_c) of each layer in order (FuseLstmStack).",
    -1, lstmStackRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "gru",
    "ONNX GRU over (x, w, r, b, sequence_lens, initial_h); returns (Y, Y_h).\n"
    "Optional inputs with zero elements are absent.",
    6, recurrentRel<"gru", 6, 3>, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "rnn",
    "ONNX simple RNN over (x, w, r, b, sequence_lens, initial_h); returns\n"
    "(Y, Y_h). Optional inputs with zero elements are absent.",
    6, recurrentRel<"rnn", 6, 1>, FusionPattern::Opaque});

} // namespace rivet::ir
