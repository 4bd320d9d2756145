//===- LibraryDeps.h - What a shared library links, for tests ---*- C++ -*-===//
//
// The dependency tests (tests/vm/runtime_deps_test.cc,
// tests/ir/interpreter_deps_test.cc) read readelf's NEEDED entries and ldd's
// listing of a library and look for names it must not load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <initializer_list>
#include <string>

namespace rivet::test {

/// stdout and stderr of Cmd; fails the test when it cannot run or exits
/// non-zero.
inline std::string capture(const std::string &Cmd) {
  std::string Out;
  FILE *P = popen((Cmd + " 2>&1").c_str(), "r");
  if (!P) {
    ADD_FAILURE() << "cannot run: " << Cmd;
    return Out;
  }
  std::array<char, 4096> Buf;
  size_t N;
  while ((N = fread(Buf.data(), 1, Buf.size(), P)) > 0)
    Out.append(Buf.data(), N);
  int Rc = pclose(P);
  EXPECT_EQ(Rc, 0) << Cmd << " failed:\n" << Out;
  return Out;
}

/// The first of Bad (lower-case library name prefixes) that Listing names,
/// whatever its case, or "".
inline std::string firstNamed(const std::string &Listing,
                              std::initializer_list<const char *> Bad) {
  std::string L = Listing;
  std::transform(L.begin(), L.end(), L.begin(),
                 [](unsigned char C) { return (char)std::tolower(C); });
  for (const char *B : Bad)
    if (L.find(B) != std::string::npos)
      return B;
  return "";
}

} // namespace rivet::test
