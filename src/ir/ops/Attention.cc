//===- Attention.cc - Scaled dot-product attention (ONNX Attention) -------===//
//
// attention(q, k, v[, attn_mask][, past_key, past_value][, nonpad_kv_seqlen])
// in one call: the has_* attributes say which optional arguments follow v, in
// that order, so that an absent argument needs no placeholder value.
// Inputs are [B, heads, S, head_size] (4-D) or [B, S, heads * head_size]
// (3-D, with q_num_heads and kv_num_heads); q heads may be a multiple of the
// kv heads (grouped-query attention). The result is y, or a tuple of y,
// then present_key and present_value (with_present), then the scores
// (with_qk).
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

constexpr std::string_view Op = "attention";

bool flagAttr(const Attrs &A, const std::string &Name) {
  int64_t K = OpAttrs(Op, A).getInt(Name);
  if (K != 0 && K != 1)
    fail("{}: attribute '{}' must be 0 or 1, got {}", Op, Name, K);
  return K == 1;
}

/// Where a call's arguments are, from its has_* attributes; -1: absent.
struct ArgLayout {
  int64_t mask = -1, pastKey = -1, pastValue = -1, nonpad = -1;
  size_t count = 3;
  std::vector<const char *> names = {"q", "k", "v"};
};

ArgLayout argLayout(const Attrs &A) {
  ArgLayout L;
  auto Add = [&](int64_t &Index, const char *Name) {
    Index = (int64_t)L.count++;
    L.names.push_back(Name);
  };
  if (flagAttr(A, "has_attn_mask"))
    Add(L.mask, "attn_mask");
  if (flagAttr(A, "has_past")) {
    Add(L.pastKey, "past_key");
    Add(L.pastValue, "past_value");
  }
  if (flagAttr(A, "has_nonpad_kv_seqlen"))
    Add(L.nonpad, "nonpad_kv_seqlen");
  return L;
}

bool attentionDType(DType T) {
  return T == DType::Float16 || T == DType::BFloat16 || T == DType::Float32 ||
         T == DType::Float64;
}

Dim mulDim(const Dim &A, const Dim &B) {
  return A.isConst() && B.isConst() ? Dim::constant(A.value * B.value)
                                    : Dim::any();
}

/// The relation's view of the call, argument by argument.
class AttentionRel {
public:
  AttentionRel(const std::vector<Type> &Args, const ArgLayout &L)
      : Args(Args), L(L) {}

  const TensorTypeNode &arg(int64_t I) const {
    return tensorArg(Op, Args, (size_t)I);
  }

  /// Dimension D of argument I, `?` when its rank is unknown.
  Dim dim(int64_t I, size_t D) const {
    const TensorTypeNode &T = arg(I);
    return T.shape ? (*T.shape)[D] : Dim::any();
  }

  /// Checks argument I's rank when known.
  void requireRank(int64_t I, size_t Rank) const {
    const TensorTypeNode &T = arg(I);
    if (T.shape && T.shape->size() != Rank)
      failArg((size_t)I, "{}: {} must have rank {}, got {}", Op, L.names[I],
              Rank, typeStr(T));
  }

  /// Merges What (known so far as Want) with Got, a dimension of argument I.
  Dim agree(const Dim &Want, const Dim &Got, int64_t I,
            std::string_view What) const {
    std::optional<Dim> M = mergeEqualDim(Want, Got);
    if (!M)
      failArg((size_t)I, "{}: {} {} has {} {}, expected {}", Op, L.names[I],
              typeStr(arg(I)), What, Got.str(), Want.str());
    return *M;
  }

  /// Splits a 3-D argument's hidden size into Heads heads; the head size.
  Dim headSize(int64_t I, int64_t Heads) const {
    Dim Hidden = dim(I, 2);
    if (!Hidden.isConst())
      return Dim::any();
    if (Hidden.value % Heads != 0)
      failArg((size_t)I,
              "{}: {} {} has hidden size {}, not a multiple of the {} heads",
              Op, L.names[I], typeStr(arg(I)), Hidden.value, Heads);
    return Dim::constant(Hidden.value / Heads);
  }

private:
  const std::vector<Type> &Args;
  const ArgLayout &L;
};

Type attentionRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs(Op, A);
  ArgLayout L = argLayout(A);
  if (Args.size() != L.count) {
    std::string Names;
    for (const char *N : L.names)
      Names += (Names.empty() ? "" : ", ") + std::string(N);
    fail("{}: expects {} arguments ({}) as the has_* attributes say, got {}",
         Op, L.count, Names, Args.size());
  }
  OpAttrs OA(Op, A);
  bool WithPresent = flagAttr(A, "with_present"),
       WithQk = flagAttr(A, "with_qk"), SeqFirst = flagAttr(A, "seq_first");
  if (SeqFirst && (L.pastKey >= 0 || WithPresent || WithQk))
    fail("{}: seq_first takes q, k and v without a KV cache or scores", Op);
  flagAttr(A, "is_causal");
  int64_t Mode = OA.getInt("qk_matmul_output_mode");
  if (Mode < 0 || Mode > 3)
    fail("{}: attribute 'qk_matmul_output_mode' must be 0, 1, 2 or 3, got {}",
         Op, Mode);
  if (std::optional<DType> SD = optDType(Op, A, "softmax_dtype");
      SD && !attentionDType(*SD))
    fail("{}: attribute 'softmax_dtype' must be bfloat16, float16, float32 or "
         "float64, got {}",
         Op, dtypeName(*SD));
  std::optional<int64_t> QHeads = optInt(A, "q_num_heads"),
                         KvHeads = optInt(A, "kv_num_heads");
  for (auto [Name, H] :
       {std::pair{"q_num_heads", QHeads}, std::pair{"kv_num_heads", KvHeads}})
    if (H && *H < 1)
      fail("{}: attribute '{}' must be >= 1, got {}", Op, Name, *H);
  if (QHeads && KvHeads && *QHeads % *KvHeads != 0)
    fail("{}: q_num_heads {} is not a multiple of kv_num_heads {}", Op, *QHeads,
         *KvHeads);
  if (anyUndecided(Args))
    return nullptr;

  AttentionRel R(Args, L);
  const TensorTypeNode &Q = R.arg(0), &K = R.arg(1), &V = R.arg(2);
  for (int64_t I = 0; I < (int64_t)L.count; ++I) {
    if (I == L.mask || I == L.nonpad)
      continue;
    if (!attentionDType(R.arg(I).dtype))
      failArg((size_t)I,
              "{}: {} must be bfloat16, float16, float32 or float64, got {}",
              Op, L.names[I], typeStr(R.arg(I)));
  }
  requireSameDType(Op, Q, K, 1);
  if (L.pastKey >= 0) {
    requireSameDType(Op, Q, R.arg(L.pastKey), (size_t)L.pastKey);
    requireSameDType(Op, V, R.arg(L.pastValue), (size_t)L.pastValue);
  }

  // q, k and v share a rank, 3 or 4; the first known one decides.
  std::optional<size_t> Rank;
  for (int64_t I = 0; I < 3; ++I) {
    const TensorTypeNode &T = R.arg(I);
    if (!T.shape)
      continue;
    if (T.shape->size() != 3 && T.shape->size() != 4)
      failArg((size_t)I,
              "{}: {} must have rank 3 ([batch, seq, hidden]) or 4 ([batch, "
              "heads, seq, head_size]), got {}",
              Op, L.names[I], typeStr(T));
    if (Rank && *Rank != T.shape->size())
      failArg((size_t)I,
              "{}: q, k and v must have the same rank, got {} and {}", Op,
              typeStr(Q), typeStr(T));
    Rank = T.shape->size();
  }
  if (SeqFirst && Rank == 4u)
    fail("{}: seq_first takes 3-D q, k and v, got {}", Op, typeStr(Q));

  Dim Batch = Dim::any(), HQ = Dim::any(), HKv = Dim::any(), SeqQ = Dim::any(),
      SeqKv = Dim::any(), HeadK = Dim::any(), HeadV = Dim::any();
  if (Rank == 4u) {
    for (int64_t I = 0; I < 3; ++I)
      Batch = R.agree(Batch, R.dim(I, 0), I, "batch size");
    HQ = R.dim(0, 1);
    HKv = R.agree(R.dim(1, 1), R.dim(2, 1), 2, "kv head count");
    SeqQ = R.dim(0, 2);
    SeqKv = R.agree(R.dim(1, 2), R.dim(2, 2), 2, "kv sequence length");
    HeadK = R.agree(R.dim(0, 3), R.dim(1, 3), 1, "head size");
    HeadV = R.dim(2, 3);
    if (QHeads)
      HQ = R.agree(HQ, Dim::constant(*QHeads), 0, "head count (q_num_heads)");
    if (KvHeads)
      HKv =
          R.agree(HKv, Dim::constant(*KvHeads), 1, "head count (kv_num_heads)");
  } else if (Rank == 3u) {
    if (!QHeads || !KvHeads)
      fail("{}: 3-D q, k and v need attributes q_num_heads and kv_num_heads",
           Op);
    // [batch, seq, hidden], or [seq, batch, hidden] with seq_first.
    const size_t BA = SeqFirst ? 1 : 0, SA = SeqFirst ? 0 : 1;
    for (int64_t I = 0; I < 3; ++I)
      Batch = R.agree(Batch, R.dim(I, BA), I, "batch size");
    HQ = Dim::constant(*QHeads);
    HKv = Dim::constant(*KvHeads);
    SeqQ = R.dim(0, SA);
    SeqKv = R.agree(R.dim(1, SA), R.dim(2, SA), 2, "kv sequence length");
    HeadK = R.headSize(0, *QHeads);
    R.agree(mulDim(HeadK, HKv), R.dim(1, 2), 1,
            "hidden size (kv_num_heads * head size of q)");
    HeadV = R.headSize(2, *KvHeads);
  }
  if (HQ.isConst() && HKv.isConst() && HQ.value % HKv.value != 0)
    fail("{}: the {} q heads are not a multiple of the {} kv heads", Op,
         HQ.value, HKv.value);

  Dim Total = SeqKv;
  if (L.pastKey >= 0) {
    R.requireRank(L.pastKey, 4);
    R.requireRank(L.pastValue, 4);
    Dim Past = Dim::any();
    for (int64_t I : {L.pastKey, L.pastValue}) {
      Batch = R.agree(Batch, R.dim(I, 0), I, "batch size");
      HKv = R.agree(HKv, R.dim(I, 1), I, "kv head count");
      Past = R.agree(Past, R.dim(I, 2), I, "past sequence length");
    }
    HeadK = R.agree(HeadK, R.dim(L.pastKey, 3), L.pastKey, "head size");
    HeadV = R.agree(HeadV, R.dim(L.pastValue, 3), L.pastValue, "head size");
    Total = Past.isConst() && SeqKv.isConst()
                ? Dim::constant(Past.value + SeqKv.value)
                : Dim::any();
  }

  if (L.mask >= 0) {
    const TensorTypeNode &M = R.arg(L.mask);
    if (M.dtype != DType::Bool && !attentionDType(M.dtype) &&
        !isInteger(M.dtype))
      failArg((size_t)L.mask,
              "{}: attn_mask must be bool, an integer or a float dtype, got {}",
              Op, typeStr(M));
    if (M.shape) {
      size_t MR = M.shape->size();
      if (MR < 1 || MR > 4)
        failArg((size_t)L.mask, "{}: attn_mask must have rank 1 to 4, got {}",
                Op, typeStr(M));
      // The last axis may be shorter than the keys (padded with masked
      // positions); the others broadcast to (batch, q heads, q seq).
      const Dim &Last = M.shape->back();
      if (Last.isConst() && Total.isConst() && Last.value > Total.value)
        failArg((size_t)L.mask,
                "{}: attn_mask {} has {} columns, more than the {} keys "
                "(past and new)",
                Op, typeStr(M), Last.value, Total.value);
      std::vector<Dim> Lead = {Batch, HQ, SeqQ};
      for (size_t D = 0; D + 1 < MR; ++D) {
        const Dim &MD = (*M.shape)[MR - 2 - D];
        const Dim &Want = Lead[2 - D];
        if (MD.isConst() && MD.value != 1 && Want.isConst() &&
            Want.value != MD.value)
          failArg((size_t)L.mask,
                  "{}: attn_mask {} does not broadcast to (batch, q heads, q "
                  "seq, keys) = {}",
                  Op, typeStr(M), dimsToString({Batch, HQ, SeqQ, Total}));
      }
    }
  }
  if (L.nonpad >= 0) {
    const TensorTypeNode &N = R.arg(L.nonpad);
    if (N.dtype != DType::Int64)
      failArg((size_t)L.nonpad, "{}: nonpad_kv_seqlen must be int64, got {}",
              Op, typeStr(N));
    R.requireRank(L.nonpad, 1);
    Batch = R.agree(Batch, R.dim(L.nonpad, 0), L.nonpad, "batch size");
  }

  Type Y;
  if (!Rank)
    Y = tensorTypeUnknownRank(Q.dtype);
  else if (*Rank == 4)
    Y = makeTensor(std::vector<Dim>{Batch, HQ, SeqQ, HeadV}, Q.dtype);
  else if (SeqFirst)
    Y = makeTensor(std::vector<Dim>{SeqQ, Batch, mulDim(HQ, HeadV)}, Q.dtype);
  else
    Y = makeTensor(std::vector<Dim>{Batch, SeqQ, mulDim(HQ, HeadV)}, Q.dtype);
  if (!WithPresent && !WithQk)
    return Y;
  std::vector<Type> Fields = {Y};
  if (WithPresent) {
    Fields.push_back(
        makeTensor(std::vector<Dim>{Batch, HKv, Total, HeadK}, Q.dtype));
    Fields.push_back(
        makeTensor(std::vector<Dim>{Batch, HKv, Total, HeadV}, V.dtype));
  }
  if (WithQk)
    Fields.push_back(
        makeTensor(std::vector<Dim>{Batch, HQ, SeqQ, Total}, Q.dtype));
  return tupleType(std::move(Fields));
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "attention",
    "Scaled dot-product attention (ONNX Attention): softmax(q k^T * scale + "
    "mask) v over 3-D or 4-D q, k, v with grouped kv heads, causal and "
    "padding masks, softcap and a KV cache; optionally returns the present "
    "cache and the scores.",
    -1, attentionRel, FusionPattern::Opaque});

} // namespace rivet::ir
