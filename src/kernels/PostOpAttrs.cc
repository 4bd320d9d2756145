//===- PostOpAttrs.cc - Fused post-ops and their attributes ---------------===//
#include "kernels/PostOpAttrs.h"

#include "kernels/Error.h"
#include "kernels/Kernel.h"

#include <cstring>
#include <limits>
#include <span>

namespace rivet {
namespace {

// std::strings built once: fused kernels read these on every call.
const std::string KindAttr = "post_ops";
const std::string LoAttr = "post_op_lo";
const std::string HiAttr = "post_op_hi";

/// The post-op kinds in A, or null when A has none.
const std::vector<std::string> *postOpKinds(const Attrs &A) {
  const AttrValue *V = A.find(KindAttr);
  if (!V)
    return nullptr;
  if (const auto *L = std::get_if<std::vector<std::string>>(V))
    return L;
  return &A.getStrings(KindAttr); // `[]`, or the error naming the kind
}

/// A float list attribute, without a copy when it is stored as floats.
std::span<const double> floatsOf(const Attrs &A, const std::string &Name,
                                 std::vector<double> &Buf) {
  if (const AttrValue *V = A.find(Name))
    if (const auto *L = std::get_if<std::vector<double>>(V))
      return *L;
  Buf = A.getFloats(Name);
  return Buf;
}

} // namespace

const char *postOpName(PostOp::Kind K) {
  switch (K) {
  case PostOp::Kind::Relu: return "relu";
  case PostOp::Kind::Clip: return "clip";
  case PostOp::Kind::Sigmoid: return "sigmoid";
  case PostOp::Kind::Tanh: return "tanh";
  case PostOp::Kind::Add: return "add";
  case PostOp::Kind::Multiply: return "multiply";
  }
  return "?";
}

bool postOpKindOf(const std::string &OpName, PostOp::Kind &K) {
  for (PostOp::Kind C :
       {PostOp::Kind::Relu, PostOp::Kind::Clip, PostOp::Kind::Sigmoid,
        PostOp::Kind::Tanh, PostOp::Kind::Add, PostOp::Kind::Multiply})
    if (OpName == postOpName(C)) {
      K = C;
      return true;
    }
  return false;
}

PostOp makePostOp(PostOp::Kind K, const Attrs &OpAttrs, Tensor Operand) {
  PostOp P;
  P.kind = K;
  if (K == PostOp::Kind::Clip) {
    // An absent bound is no bound: the float range's limit, not a default.
    P.lo = OpAttrs.getFloat("min", std::numeric_limits<float>::lowest());
    P.hi = OpAttrs.getFloat("max", std::numeric_limits<float>::max());
  }
  P.operand = std::move(Operand);
  return P;
}

void encodePostOps(const PostOps &P, Attrs &A) {
  std::vector<std::string> Kinds;
  std::vector<double> Lo, Hi;
  for (const PostOp &Op : P) {
    Kinds.push_back(postOpName(Op.kind));
    Lo.push_back(Op.lo);
    Hi.push_back(Op.hi);
  }
  A.set(KindAttr, Kinds);
  A.set(LoAttr, Lo);
  A.set(HiAttr, Hi);
}

PostOps decodePostOps(const Attrs &A, const std::vector<Tensor> &Operands) {
  PostOps R;
  const std::vector<std::string> *KindList = postOpKinds(A);
  if (!KindList)
    return R;
  const std::vector<std::string> &Kinds = *KindList;
  std::vector<double> LoBuf, HiBuf;
  std::span<const double> Lo = floatsOf(A, LoAttr, LoBuf),
                          Hi = floatsOf(A, HiAttr, HiBuf);
  if (Lo.size() != Kinds.size() || Hi.size() != Kinds.size())
    fail("post-ops: '{}' has {} entries but '{}' and '{}' have {} and {}",
         KindAttr, Kinds.size(), LoAttr, HiAttr, Lo.size(), Hi.size());
  size_t Next = 0;
  for (size_t I = 0; I < Kinds.size(); ++I) {
    PostOp Op;
    if (!postOpKindOf(Kinds[I], Op.kind))
      fail("post-ops: unknown post-op '{}' (expected relu, clip, sigmoid, "
           "tanh, add or multiply)",
           Kinds[I]);
    Op.lo = Lo[I];
    Op.hi = Hi[I];
    if (Op.isBinary()) {
      if (Next == Operands.size())
        fail("post-ops: '{}' #{} has no operand ({} given)", Kinds[I], I,
             Operands.size());
      Op.operand = Operands[Next++];
    }
    R.push_back(std::move(Op));
  }
  if (Next != Operands.size())
    fail("post-ops: {} operands given for {} binary post-ops", Operands.size(),
         Next);
  return R;
}

int64_t countPostOpOperands(const Attrs &A) {
  const std::vector<std::string> *Kinds = postOpKinds(A);
  if (!Kinds)
    return 0;
  int64_t N = 0;
  for (const std::string &K : *Kinds)
    N += K == "add" || K == "multiply";
  return N;
}

Attrs withoutPostOpAttrs(const Attrs &A) {
  Attrs R;
  for (const auto &[Name, V] : A.items())
    if (Name != KindAttr && Name != LoAttr && Name != HiAttr)
      R.set(Name, V);
  return R;
}

void applyPostOpsReference(Tensor &Out, const PostOps &P) {
  for (const PostOp &Op : P) {
    const KernelInfo &K = KernelRegistry::global().get(postOpName(Op.kind));
    Attrs A;
    if (Op.kind == PostOp::Kind::Clip) {
      A.set("min", Op.lo);
      A.set("max", Op.hi);
    }
    std::vector<Tensor> In{Out};
    if (Op.isBinary())
      In.push_back(Op.operand);
    std::vector<Tensor> R = invokeKernel(K, In, A);
    if (R.at(0).shape() != Out.shape() || R[0].dtype() != Out.dtype())
      fail("post-op {}: operand {} changes the anchor's output {} to {}",
           postOpName(Op.kind),
           Op.operand.defined() ? Op.operand.typeString() : "-",
           Out.typeString(), R[0].typeString());
    std::memcpy(Out.rawData(), R[0].rawData(), Out.nbytes());
  }
}

} // namespace rivet
