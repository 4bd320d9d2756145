//===- Random.cc - Random tensor kernels ----------------------------------===//
//
// random_uniform, random_normal and their _like forms draw from a 64-bit
// Mersenne Twister: seeded with the seed attribute when given (the same
// tensor on every call and platform), else with a fresh seed per call from
// a process-wide sequence started from std::random_device. Uniform values
// are 53-bit fractions scaled to [low, high); normal ones come from the
// Box-Muller transform.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <atomic>
#include <cmath>
#include <numbers>
#include <random>

namespace rivet::kernels {
namespace {

/// The engine of one call.
std::mt19937_64 engineFor(const char *Op, const Attrs &A) {
  if (A.has("seed")) {
    double Seed = attrFloat(Op, A, "seed");
    if (!std::isfinite(Seed))
      fail("{}: attribute 'seed' must be finite, got {}", Op, Seed);
    return std::mt19937_64((uint64_t)(int64_t)Seed);
  }
  static std::atomic<uint64_t> Next{std::random_device{}() |
                                    (uint64_t)std::random_device{}() << 32};
  return std::mt19937_64(Next.fetch_add(0x9E3779B97F4A7C15ull));
}

/// A double uniform in [0, 1).
double unit(std::mt19937_64 &G) { return (double)(G() >> 11) * 0x1.0p-53; }

template <bool Normal> constexpr const char *randomName(bool Like) {
  if (Normal)
    return Like ? "random_normal_like" : "random_normal";
  return Like ? "random_uniform_like" : "random_uniform";
}

/// The result dtype: the attribute, else (a _like form) x's.
DType resultDType(const char *Op, const std::vector<Tensor> &In,
                  const Attrs &A) {
  std::optional<DType> T = In.empty()
                               ? attrDType(Op, A, "dtype")
                               : attrDType(Op, A, "dtype", In[0].dtype());
  if (!T || !isFloat(*T))
    fail("{}: the result dtype must be a float dtype, got {}", Op,
         T ? dtypeName(*T) : "none");
  return *T;
}

template <bool Normal, bool Like>
std::vector<TensorMeta> randomShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  constexpr const char *Op = randomName<Normal>(Like);
  checkArity(Op, In, Like ? 1 : 0);
  DType T = resultDType(Op, In, A);
  if (Like)
    return {{In[0].shape(), T}};
  Shape S = attrInts(Op, A, "shape");
  for (int64_t D : S)
    if (D < 0)
      fail("{}: attribute 'shape' has a negative extent {}", Op, D);
  return {{S, T}};
}

template <bool Normal, bool Like>
void randomKernel(const std::vector<Tensor> &, std::vector<Tensor> &Out,
                  const Attrs &A) {
  constexpr const char *Op = randomName<Normal>(Like);
  std::mt19937_64 G = engineFor(Op, A);
  double Lo = Normal ? attrFloat(Op, A, "mean") : attrFloat(Op, A, "low");
  double Span =
      Normal ? attrFloat(Op, A, "scale") : attrFloat(Op, A, "high") - Lo;
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      E *P = Out[0].data<E>();
      for (int64_t I = 0, N = Out[0].numel(); I < N; ++I) {
        double U = unit(G);
        if (Normal) // 1 - U is in (0, 1]: its log is finite
          U = std::sqrt(-2 * std::log(1 - U)) *
              std::cos(2 * std::numbers::pi * unit(G));
        P[I] = convertElement<E>(Lo + Span * U);
      }
    }
  });
}

std::vector<AttrSpec> randomAttrs(bool Normal, bool Like) {
  std::vector<AttrSpec> S;
  if (Normal) {
    S.push_back(
        {"mean", AttrKind::Float, false, "the distribution's mean", 0.0});
    S.push_back({"scale", AttrKind::Float, false,
                 "the distribution's standard deviation", 1.0});
  } else {
    S.push_back({"low", AttrKind::Float, false, "the lower bound", 0.0});
    S.push_back(
        {"high", AttrKind::Float, false, "the upper bound (excluded)", 1.0});
  }
  S.push_back({"seed", AttrKind::Float, false,
               "makes the values a function of it; absent: fresh each call"});
  if (Like)
    S.push_back({"dtype", AttrKind::String, false,
                 "the result's float dtype; default x's"});
  else {
    S.push_back({"dtype", AttrKind::String, false, "the result's float dtype",
                 "float32"});
    S.push_back({"shape", AttrKind::Ints, true, "the result's shape"});
  }
  return S;
}

} // namespace

RIVET_REGISTER_KERNEL("random_uniform", (randomKernel<false, false>),
                      (randomShape<false, false>), false);
RIVET_REGISTER_KERNEL("random_normal", (randomKernel<true, false>),
                      (randomShape<true, false>), false);
RIVET_REGISTER_KERNEL("random_uniform_like", (randomKernel<false, true>),
                      (randomShape<false, true>), false);
RIVET_REGISTER_KERNEL("random_normal_like", (randomKernel<true, true>),
                      (randomShape<true, true>), false);

RIVET_REGISTER_ATTRS("random_uniform", randomAttrs(false, false));
RIVET_REGISTER_ATTRS("random_normal", randomAttrs(true, false));
RIVET_REGISTER_ATTRS("random_uniform_like", randomAttrs(false, true));
RIVET_REGISTER_ATTRS("random_normal_like", randomAttrs(true, true));

} // namespace rivet::kernels
