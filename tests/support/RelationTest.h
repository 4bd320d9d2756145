//===- RelationTest.h - Helpers for operator type-relation tests -*- C++
//-*-===//
//
// The vocabulary every tests/ir/*_relations_test.cc uses: short dimension
// and tensor-type constructors, calling an operator's relation by name, and
// the message of the error it throws.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Op.h"
#include "ir/Type.h"
#include "kernels/Error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rivet::reltest {

using ir::Dim;
using ir::Type;

inline Dim c(int64_t V) { return Dim::constant(V); }
inline Dim s(const char *N) { return Dim::symbol(N); }
inline Dim q() { return Dim::any(); }

/// A tensor type of dtype T; f32({c(2), s("n")}) and so on.
template <DType T> Type tensorOf(std::vector<Dim> D) {
  return ir::tensorType(std::move(D), T);
}
inline constexpr auto f32 = tensorOf<DType::Float32>;
inline constexpr auto f16 = tensorOf<DType::Float16>;
inline constexpr auto i8 = tensorOf<DType::Int8>;
inline constexpr auto i32 = tensorOf<DType::Int32>;
inline constexpr auto i64 = tensorOf<DType::Int64>;
inline constexpr auto u8 = tensorOf<DType::UInt8>;
inline constexpr auto b8 = tensorOf<DType::Bool>;
/// A float32 tensor of unknown rank.
inline Type unknown() { return ir::tensorTypeUnknownRank(DType::Float32); }

/// The type operator Op's relation gives Args, as text ("null" when the
/// relation cannot decide yet).
inline std::string rel(const std::string &Op, std::vector<Type> Args,
                       Attrs A = {}) {
  Type T = ir::OpRegistry::global().get(Op).relation(Args, A);
  return T ? ir::typeToString(T) : "null";
}

/// The message of the error the relation throws ("" when none).
inline std::string relError(const std::string &Op, std::vector<Type> Args,
                            Attrs A = {}) {
  try {
    rel(Op, std::move(Args), std::move(A));
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

} // namespace rivet::reltest

/// Expects the text Msg (e.g. a relError call) to contain Substr.
#define EXPECT_REL_ERROR(Msg, Substr)                                          \
  do {                                                                         \
    std::string RelMsg = (Msg);                                                \
    EXPECT_NE(RelMsg.find(Substr), std::string::npos)                          \
        << "message: '" << RelMsg << "', expected to contain: '" << (Substr)   \
        << "'";                                                                \
  } while (false)
