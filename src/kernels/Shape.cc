//===- Shape.cc - Concrete tensor shapes ----------------------------------===//
#include "kernels/Shape.h"
#include "kernels/Error.h"

#include <fmt/format.h>

namespace rivet {

int64_t numElements(const Shape &S) {
  int64_t N = 1;
  for (int64_t D : S) {
    if (D < 0)
      fail("negative extent {} in shape {}", D, shapeToString(S));
    // (Not N > INT64_MAX / D: a division per extent of every tensor made
    // was a twentieth of a short call.)
    if (__builtin_mul_overflow(N, D, &N))
      fail("shape {} has too many elements", shapeToString(S));
  }
  return N;
}

std::string shapeToString(const Shape &S) {
  if (S.size() == 1)
    return fmt::format("({},)", S[0]);
  return fmt::format("({})", fmt::join(S, ", "));
}

std::vector<int64_t> contiguousStrides(const Shape &S) {
  std::vector<int64_t> St(S.size());
  int64_t Acc = 1;
  for (size_t I = S.size(); I-- > 0;) {
    St[I] = Acc;
    Acc *= S[I];
  }
  return St;
}

Shape broadcastShapes(const Shape &A, const Shape &B) {
  size_t R = std::max(A.size(), B.size());
  Shape Out(R);
  for (size_t I = 0; I < R; ++I) {
    int64_t DA = I < R - A.size() ? 1 : A[I - (R - A.size())];
    int64_t DB = I < R - B.size() ? 1 : B[I - (R - B.size())];
    if (DA == DB || DB == 1)
      Out[I] = DA;
    else if (DA == 1)
      Out[I] = DB;
    else
      fail("cannot broadcast {} and {}", shapeToString(A), shapeToString(B));
  }
  return Out;
}

int64_t normalizeAxis(int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    fail("axis {} is out of range for rank {}", Axis, Rank);
  return Axis < 0 ? Axis + Rank : Axis;
}

} // namespace rivet
