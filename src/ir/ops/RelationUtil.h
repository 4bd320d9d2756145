//===- RelationUtil.h - Shared pieces of operator type relations -*- C++
//-*-===//
//
// Internal to src/ir: argument checks, NumPy broadcasting of partially known
// dimension lists, axis normalization and attribute validation used by the
// type relations in src/ir/ops/*.cc, and the ArgError that lets type
// inference name the offending argument.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Op.h"
#include "kernels/Error.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::ir {

/// A relation error caused by one argument (0-based ArgIndex); type inference
/// prefixes "argument <ArgIndex + 1>: " to the message.
class ArgError : public Error {
public:
  ArgError(size_t ArgIndex, const std::string &Msg)
      : Error(Msg), ArgIndex(ArgIndex) {}
  size_t ArgIndex;
};

/// Throws ArgError for argument ArgIndex (0-based).
template <typename... Args>
[[noreturn]] void failArg(size_t ArgIndex, fmt::format_string<Args...> Fmt,
                          Args &&...A) {
  throw ArgError(ArgIndex, fmt::format(Fmt, std::forward<Args>(A)...));
}

/// A tensor type of this (partial) shape and dtype.
inline Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
}

/// Refuses argument Arg of Op unless it is uint8 or int8 (the quantized
/// operators' operands).
void require8Bit(std::string_view Op, const TensorTypeNode &T, size_t Arg);

/// An operator name usable as a template argument, so that one relation
/// template serves a whole family and still names its operator in errors.
template <size_t N> struct OpName {
  constexpr OpName(const char (&S)[N]) { std::copy_n(S, N, Value); }
  char Value[N];
  constexpr std::string_view view() const { return {Value, N - 1}; }
};

/// Checks A against the registered schema of operator Op: unknown
/// attributes, missing required ones and wrong kinds are errors.
void validateOpAttrs(std::string_view Op, const Attrs &A);

/// True when any argument is null or an IncompleteType: the relation must
/// return null (not decided yet).
bool anyUndecided(const std::vector<Type> &Args);

/// The tensor type of argument I; throws naming the operator otherwise.
const TensorTypeNode &tensorArg(std::string_view Op,
                                const std::vector<Type> &Args, size_t I);

/// Checks the argument count (relations may be called directly).
void checkArity(std::string_view Op, const std::vector<Type> &Args,
                size_t Expected);

/// "a float dtype (float16, float32 or float64)" style dtype checks.
void requireFloat(std::string_view Op, const TensorTypeNode &T, size_t Arg);
void requireNumeric(std::string_view Op, const TensorTypeNode &T, size_t Arg);
void requireBool(std::string_view Op, const TensorTypeNode &T, size_t Arg);
void requireIndex(std::string_view Op, const TensorTypeNode &T, size_t Arg);
/// Argument Arg must have the dtype of argument 0 (no implicit promotion).
void requireSameDType(std::string_view Op, const TensorTypeNode &First,
                      const TensorTypeNode &T, size_t Arg);

/// NumPy broadcasting of two dimensions: equal -> keep; 1 vs d -> d;
/// const a vs const b (both != 1) -> nullopt (an error); symbol or ? vs a
/// const c != 1 -> c; otherwise ?.
std::optional<Dim> broadcastDim(const Dim &A, const Dim &B);
/// Broadcasts the shapes of the tensor arguments (right-aligned); an unknown
/// rank gives an unknown rank. Throws naming the operator and both types.
std::optional<std::vector<Dim>>
broadcastArgs(std::string_view Op,
              const std::vector<const TensorTypeNode *> &Ts);

/// Two dimensions that must be equal at run time (concatenate's non-axis
/// dims, stack): the more precise one; nullopt when two constants differ.
std::optional<Dim> mergeEqualDim(const Dim &A, const Dim &B);

/// Normalizes a possibly negative Axis into [0, Rank); throws naming the
/// operator when out of range.
int64_t normalizeAxisFor(std::string_view Op, int64_t Axis, int64_t Rank);

/// Attribute getters that assume validateOpAttrs has run.
std::optional<int64_t> optInt(const Attrs &A, const std::string &Name);
std::optional<std::vector<int64_t>> optInts(const Attrs &A,
                                            const std::string &Name);
std::optional<std::string> optString(const Attrs &A, const std::string &Name);
/// A dtype attribute (a string such as "float32"), else the schema's
/// default; none when neither says. Throws naming the op.
std::optional<DType> optDType(std::string_view Op, const Attrs &A,
                              const std::string &Name);

/// "(2, 3, ?)" for messages.
std::string dimsToString(const std::vector<Dim> &Dims);
/// The type as text, for messages.
std::string typeStr(const TensorTypeNode &T);

} // namespace rivet::ir
