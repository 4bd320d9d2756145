//===- StringTable.h - The text that string tensors hold --------*- C++ -*-===//
//
// A string tensor's element is a handle: a pointer to its text, interned in
// one table for the life of the process. Operators that only move elements
// (reshape, transpose, concat, gather, slice, sequences, control flow) move
// strings exactly as they move 8-byte numbers, and two elements are equal
// exactly when their handles are. The null handle (the bytes of a zeroed
// tensor) is the empty string.
//
// The table only grows: a program that creates unboundedly many distinct
// strings grows it without bound. The strings models carry (labels,
// vocabularies, normalized words) are few, which is what this trades for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rivet {

class Tensor;

using StringHandle = const std::string *;

/// The handle of S (thread-safe; equal strings get equal handles).
StringHandle internString(std::string_view S);
/// The text of H ("" for the null handle).
inline std::string_view stringOf(StringHandle H) {
  return H ? std::string_view(*H) : std::string_view();
}
/// Number of distinct strings interned so far (for tests and limits).
size_t internedStringCount();

/// A string tensor's text as bytes, for files: per element a u32 length
/// (little-endian) and the text.
std::vector<uint8_t> encodeStrings(const Tensor &T);
/// Fills string tensor T from encodeStrings' bytes; What names the data in
/// the error for anything else (truncated, too few or too many strings).
void decodeStrings(Tensor &T, const uint8_t *Data, size_t Size,
                   const std::string &What);

/// A string tensor of shape S holding Values in row-major order.
Tensor stringTensor(const std::vector<std::string> &Values,
                    const std::vector<int64_t> &S);
/// The text of every element of a string tensor, row-major.
std::vector<std::string> stringValues(const Tensor &T);

/// Element I of a string tensor.
std::string_view stringElement(const Tensor &T, int64_t I);
/// Sets element I of a string tensor.
void setStringElement(Tensor &T, int64_t I, std::string_view S);

} // namespace rivet
