//===- runtime_deps_test.cc - What librivet_runtime.so links --------------===//
//
// The deployment runtime must not need LLVM, ONNX, protobuf or Boost: neither
// directly (readelf's NEEDED entries) nor through another library (ldd).
//
//===----------------------------------------------------------------------===//
#include "support/LibraryDeps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string>
#include <sys/stat.h>

namespace {

using rivet::test::capture;

const char *kRuntime = RIVET_BINARY_DIR "/src/librivet_runtime.so";

/// The forbidden library named in a listing, or "".
std::string forbidden(const std::string &Listing) {
  return rivet::test::firstNamed(
      Listing, {"libllvm", "libonnx", "libprotobuf", "libboost"});
}

} // namespace

TEST(RuntimeDeps, TheCheckRecognizesForbiddenLibraries) {
  EXPECT_EQ(forbidden(" 0x1 (NEEDED) Shared library: [libLLVM-16.so.1]"),
            "libllvm");
  EXPECT_EQ(forbidden("libprotobuf.so.32 => /usr/lib/libprotobuf.so.32"),
            "libprotobuf");
  EXPECT_EQ(forbidden("libonnx_proto.so => x"), "libonnx");
  EXPECT_EQ(forbidden("libboost_graph.so.1.74.0 => y"), "libboost");
  EXPECT_EQ(forbidden("libfmt.so.9 => z\nlibc.so.6 => w"), "");
}

TEST(RuntimeDeps, RuntimeNeedsNoLLVMOnnxProtobufOrBoost) {
  struct stat St;
  ASSERT_EQ(stat(kRuntime, &St), 0) << kRuntime << " is missing";
  std::string Needed = capture(std::string("readelf -d ") + kRuntime);
  // The listing is real: the runtime needs at least the C library.
  ASSERT_NE(Needed.find("(NEEDED)"), std::string::npos) << Needed;
  ASSERT_NE(Needed.find("libc.so"), std::string::npos) << Needed;
  EXPECT_EQ(forbidden(Needed), "") << "librivet_runtime.so needs:\n" << Needed;

  std::string All = capture(std::string("ldd ") + kRuntime);
  ASSERT_NE(All.find("libc.so"), std::string::npos) << All;
  EXPECT_EQ(All.find("not found"), std::string::npos) << All;
  EXPECT_EQ(forbidden(All), "") << "librivet_runtime.so loads:\n" << All;
}
