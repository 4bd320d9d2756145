//===- RNN.cc - lstm, gru and rnn: ONNX recurrent layers ------------------===//
#include "ir/ops/RelationUtil.h"

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

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "lstm",
    "ONNX LSTM over (x, w, r, b, sequence_lens, initial_h, initial_c, p);\n"
    "returns (Y, Y_h, Y_c). Optional inputs with zero elements are absent.",
    8, recurrentRel<"lstm", 8, 4>, FusionPattern::Opaque});
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
