//===- ReshapeDims.h - reshape_dyn's "dims" entries ---------------*- C++
//-*-===//
//
// ResolveShapeValues records on a reshape_dyn call the extents of its result
// it proved ("dims", strings): a non-negative integer, a symbol of the
// function, or "?". The pass writes them, reshape_dyn's relation reads them
// into the result's type, and its shape function checks the integers at
// run time; the spelling is defined here once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

namespace rivet::reshape_dims {

/// The entry of an unknown extent.
inline constexpr const char *kUnknown = "?";

/// The extent Entry spells, or nullopt when it is not an integer >= 0.
inline std::optional<int64_t> extentOf(const std::string &Entry) {
  int64_t V = 0;
  const char *End = Entry.data() + Entry.size();
  auto [P, Err] = std::from_chars(Entry.data(), End, V);
  if (Err != std::errc() || P != End || V < 0)
    return std::nullopt;
  return V;
}

/// Whether Name can stand for a symbol: it does not read back as an
/// extent, a negative number or "?".
inline bool isSymbolName(const std::string &Name) {
  return !Name.empty() && Name != kUnknown &&
         !std::isdigit((unsigned char)Name[0]) && Name[0] != '-';
}

} // namespace rivet::reshape_dims
