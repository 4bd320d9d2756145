//===- Rotary.cc - Rotary positional embedding kernel ---------------------===//
//
// rotary_embedding over x [B, H, S, D] or [B, S, H * D]: each head's pairs
// (x1, x2), the two halves of its first rot entries or, interleaved, its
// even and odd ones, become (cos x1 - sin x2, sin x1 + cos x2); the entries
// past rot are copied. Arithmetic is in the element type (float for the
// 16-bit floats), as ONNX's reference computes in NumPy's.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

namespace rivet::kernels {
namespace {

constexpr const char *RotaryOp = "rotary_embedding";

/// The extents of one call and the strides of x's (and y's) layout.
struct RotaryPlan {
  int64_t B = 0, H = 0, S = 0, D = 0, Rot = 0;
  int64_t StrideB = 0, StrideH = 0, StrideS = 0;
  bool WithIds = false;
  int64_t MaxPos = -1; // rows of the caches with position ids
};

RotaryPlan planRotary(const std::vector<Tensor> &In, const Attrs &A) {
  if (In.size() != 3 && In.size() != 4)
    fail("{}: expected 3 or 4 inputs (x, cos_cache, sin_cache[, "
         "position_ids]), got {}",
         RotaryOp, In.size());
  const Tensor &X = In[0];
  checkDType(RotaryOp, "x", X.dtype(), DTypeClass::Float);
  checkSameDType(RotaryOp, "x", X, "cos_cache", In[1]);
  checkSameDType(RotaryOp, "x", X, "sin_cache", In[2]);
  int64_t Heads = attrInt(RotaryOp, A, "num_heads");
  RotaryPlan P;
  const Shape &XS = X.shape();
  if (XS.size() == 4) {
    P.B = XS[0], P.H = XS[1], P.S = XS[2], P.D = XS[3];
    P.StrideS = P.D, P.StrideH = P.S * P.D, P.StrideB = P.H * P.StrideH;
  } else if (XS.size() == 3) {
    if (Heads <= 0 || XS[2] % Heads != 0)
      fail("{}: num_heads {} does not divide the hidden size of x {}", RotaryOp,
           Heads, shapeToString(XS));
    P.B = XS[0], P.S = XS[1], P.H = Heads, P.D = XS[2] / Heads;
    P.StrideH = P.D, P.StrideS = XS[2], P.StrideB = P.S * XS[2];
  } else {
    fail("{}: x must be [B, H, S, D] or [B, S, hidden], got {}", RotaryOp,
         shapeToString(XS));
  }
  P.Rot = attrInt(RotaryOp, A, "rotary_embedding_dim");
  if (P.Rot == 0)
    P.Rot = P.D;
  if (P.Rot < 0 || P.Rot % 2 != 0 || P.Rot > P.D)
    fail("{}: rotary_embedding_dim {} must be even and at most the head "
         "size {}",
         RotaryOp, P.Rot, P.D);
  attrFlag(RotaryOp, A, "interleaved");
  P.WithIds = In.size() == 4;
  // With position ids the caches' rows are positions: cos_cache's count.
  P.MaxPos = P.WithIds && In[1].rank() == 2 ? In[1].shape()[0] : -1;
  Shape Cache =
      P.WithIds ? Shape{P.MaxPos, P.Rot / 2} : Shape{P.B, P.S, P.Rot / 2};
  for (size_t I : {size_t(1), size_t(2)})
    if (In[I].shape() != Cache)
      fail("{}: input '{}' must be {}, got {}", RotaryOp,
           I == 1 ? "cos_cache" : "sin_cache",
           P.WithIds ? fmt::format("[max_position, {}]", P.Rot / 2)
                     : shapeToString(Cache),
           shapeToString(In[I].shape()));
  if (P.WithIds) {
    if (In[3].dtype() != DType::Int64 || In[3].shape() != Shape{P.B, P.S})
      fail("{}: input 'position_ids' must be int64 ({}, {}), got {}", RotaryOp,
           P.B, P.S, In[3].typeString());
  }
  return P;
}

std::vector<TensorMeta> rotaryShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  planRotary(In, A);
  return {{In[0].shape(), In[0].dtype()}};
}

void rotaryKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  RotaryPlan P = planRotary(In, A);
  bool Interleaved = attrFlag(RotaryOp, A, "interleaved");
  int64_t Half = P.Rot / 2;
  const int64_t *Ids = P.WithIds ? In[3].data<int64_t>() : nullptr;
  dispatchDType(In[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      using C = ComputeT<E>;
      const E *X = In[0].data<E>(), *Cos = In[1].data<E>(),
              *Sin = In[2].data<E>();
      E *Y = Out[0].data<E>();
      for (int64_t Bi = 0; Bi < P.B; ++Bi)
        for (int64_t Si = 0; Si < P.S; ++Si) {
          int64_t Row = Bi * P.S + Si;
          if (Ids) {
            Row = Ids[Bi * P.S + Si];
            if (Row < 0 || Row >= P.MaxPos)
              fail("{}: position id {} is out of range for caches of {} "
                   "positions",
                   RotaryOp, Row, P.MaxPos);
          }
          const E *CosRow = Cos + Row * Half, *SinRow = Sin + Row * Half;
          for (int64_t Hi = 0; Hi < P.H; ++Hi) {
            int64_t Base = Bi * P.StrideB + Hi * P.StrideH + Si * P.StrideS;
            const E *XH = X + Base;
            E *YH = Y + Base;
            for (int64_t I = 0; I < Half; ++I) {
              int64_t I1 = Interleaved ? 2 * I : I;
              int64_t I2 = Interleaved ? 2 * I + 1 : I + Half;
              C X1 = C(XH[I1]), X2 = C(XH[I2]);
              C Co = C(CosRow[I]), Sn = C(SinRow[I]);
              YH[I1] = convertElement<E>(Co * X1 - Sn * X2);
              YH[I2] = convertElement<E>(Sn * X1 + Co * X2);
            }
            std::copy(XH + P.Rot, XH + P.D, YH + P.Rot);
          }
        }
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("rotary_embedding", rotaryKernel, rotaryShape, false);

RIVET_REGISTER_ATTRS(
    "rotary_embedding",
    {{"interleaved", AttrKind::Int, false,
      "1: rotate (even, odd) entry pairs; 0: the two halves", 0},
     {"rotary_embedding_dim", AttrKind::Int, false,
      "entries of each head rotated (0: all of them)", 0},
     {"num_heads", AttrKind::Int, false, "heads of a 3-D x [B, S, H*D]", 0}});

} // namespace rivet::kernels
