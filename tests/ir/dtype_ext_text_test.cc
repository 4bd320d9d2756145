//===- dtype_ext_text_test.cc - uint16/32/64, bfloat16 in the text format -===//
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

const ParseOptions NoPrelude{false};

Module parse(const std::string &Text) {
  return parseModule(Text, "test.rvir", NoPrelude);
}

std::string parseError(const std::string &Text) {
  try {
    parse(Text);
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

/// print(parse(T)) == T, and parse(print(M)) is structurally equal to M.
void expectCanonical(const std::string &Text) {
  Module M = parse(Text);
  std::string Printed = printModule(M, {true});
  EXPECT_EQ(Printed, Text);
  Module Again = parse(Printed);
  EXPECT_TRUE(structuralEqual(M, Again)) << structuralDiff(M, Again);
}

const Tensor &field(const Module &M, size_t I) {
  auto *T = M.function("f")->as<FunctionNode>()->body->as<TupleNode>();
  return T->fields.at(I)->as<ConstantNode>()->value;
}

} // namespace

TEST(DTypeExtText, ScalarLiteralSuffixes) {
  Module M = parse(R"(
def @f() {
  (7u16, 65535u16, 4000000000u32, 18446744073709551615u64, 0u64, 1.5bf16,
   -2bf16, nanbf16, -infbf16, 3.0e38bf16)
}
)");
  EXPECT_EQ(field(M, 0).dtype(), DType::UInt16);
  EXPECT_EQ(*field(M, 0).data<uint16_t>(), 7);
  EXPECT_EQ(*field(M, 1).data<uint16_t>(), 65535);
  EXPECT_EQ(field(M, 2).dtype(), DType::UInt32);
  EXPECT_EQ(*field(M, 2).data<uint32_t>(), 4000000000u);
  EXPECT_EQ(field(M, 3).dtype(), DType::UInt64);
  EXPECT_EQ(*field(M, 3).data<uint64_t>(), ~uint64_t(0));
  EXPECT_EQ(*field(M, 4).data<uint64_t>(), 0u);
  EXPECT_EQ(field(M, 5).dtype(), DType::BFloat16);
  EXPECT_EQ(field(M, 5).data<BFloat16>()->Bits, 0x3fc0);
  EXPECT_EQ(field(M, 6).data<BFloat16>()->Bits, 0xc000);
  EXPECT_TRUE(std::isnan((float)*field(M, 7).data<BFloat16>()));
  EXPECT_EQ((float)*field(M, 8).data<BFloat16>(), -INFINITY);
  // Rounded to nearest even, not truncated.
  EXPECT_EQ(field(M, 9).data<BFloat16>()->Bits, 0x7f62);
  for (size_t I = 0; I < 10; ++I)
    EXPECT_EQ(field(M, I).rank(), 0);
}

TEST(DTypeExtText, CanonicalRoundTrip) {
  expectCanonical(
      R"(def @f(%x: Tensor[(2,), uint16], %y: Tensor[(n,), bfloat16]) {
  let %c = (7u16, 4000000000u32, 18446744073709551615u64, 1.5bf16, 0.100097656bf16, -infbf16, nanbf16, 3.3895314e+38bf16);
  let %d = const[(3,), uint64]([0, 9223372036854775808, 18446744073709551615]);
  let %e = const[(2,), bfloat16]([0.5, -9.1835e-41]);
  let %g = const[(2,), uint32]([1, 4294967295]);
  let %h = 65535u16;
  (%x, %y, %c, %d, %e, %g, %h)
}
)");
}

TEST(DTypeExtText, PrinterUsesTheSuffixes) {
  EXPECT_EQ(printConstant(Tensor::scalar<uint16_t>(3)), "3u16");
  EXPECT_EQ(printConstant(Tensor::scalar<uint32_t>(3)), "3u32");
  EXPECT_EQ(printConstant(Tensor::scalar<uint64_t>(~uint64_t(0))),
            "18446744073709551615u64");
  EXPECT_EQ(printConstant(Tensor::scalar(BFloat16(0.1f))), "0.100097656bf16");
  EXPECT_EQ(printConstant(Tensor::fromVector<uint64_t>({1, 2}, {2})),
            "const[(2,), uint64]([1, 2])");
}

TEST(DTypeExtText, BitExactBFloat16RoundTrip) {
  // Every finite bfloat16 prints and parses back to the same bits.
  std::vector<BFloat16> All;
  for (uint32_t B = 0; B <= 0xffff; ++B) {
    BFloat16 H;
    H.Bits = (uint16_t)B;
    if (!std::isnan((float)H))
      All.push_back(H);
  }
  Tensor T = Tensor::fromVector(All, {(int64_t)All.size()});
  std::string Text = "def @f() {\n  (" + printConstant(T) + ",)\n}\n";
  Module M = parse(Text);
  const Tensor &U = field(M, 0);
  ASSERT_EQ(U.numel(), T.numel());
  for (int64_t I = 0; I < T.numel(); ++I)
    ASSERT_EQ(U.data<BFloat16>()[I].Bits, T.data<BFloat16>()[I].Bits) << I;
}

TEST(DTypeExtText, OutOfRangeAndMisuseAreErrors) {
  EXPECT_NE(parseError("def @f() { 65536u16 }").find("out of range for uint16"),
            std::string::npos);
  EXPECT_NE(
      parseError("def @f() { 4294967296u32 }").find("out of range for uint32"),
      std::string::npos);
  EXPECT_NE(parseError("def @f() { 18446744073709551616u64 }")
                .find("out of range for uint64"),
            std::string::npos);
  EXPECT_NE(parseError("def @f() { -1u64 }").find("out of range for uint64"),
            std::string::npos);
  EXPECT_NE(parseError("def @f() { 1.5u32 }").find("integer suffix 'u32'"),
            std::string::npos);
  EXPECT_NE(
      parseError("def @f() { 4e38bf16 }").find("out of range for bfloat16"),
      std::string::npos);
  EXPECT_NE(parseError("def @f() { const[(1,), uint16]([-1]) }")
                .find("out of range for uint16"),
            std::string::npos);
  EXPECT_NE(parseError("def @f() { 1bf8 }").find("invalid numeric suffix"),
            std::string::npos);
}

TEST(DTypeExtText, TypesInferThroughOperators) {
  Module M = parse(R"(
def @f(%x: Tensor[(3,), uint64], %y: Tensor[(3,), uint32], %z: Tensor[(3,), bfloat16]) {
  (add(%x, 1u64), pow(cast(%z, dtype="float32"), %y), left_shift(%y, 2u32), exp(%z))
}
)");
  inferTypes(M);
  std::string Text = printModule(M);
  EXPECT_NE(Text.find("Tensor[(3,), uint64]"), std::string::npos) << Text;
  Module Bad = parse(R"(
def @f(%x: Tensor[(3,), uint64]) {
  add(%x, 1u32)
}
)");
  EXPECT_THROW(inferTypes(Bad), Error);
}

TEST(DTypeExtText, NarrowTypesAndStringsRoundTrip) {
  expectCanonical(
      R"(def @f(%x: Tensor[(2,), float8e4m3fn], %s: Tensor[(?,), string]) {
  let %a = const[(3,), float8e4m3fn]([1.5, -448.0, nan]);
  let %b = const[(4,), int4]([-8, 7, 0, -1]);
  let %c = const[(2,), float4e2m1]([6.0, -0.5]);
  let %d = const[(2,), float8e5m2]([inf, 57344.0]);
  let %e = const[(3,), string](["a", "", "tab\there \"q\""]);
  let %g = const[(), string](["scalar"]);
  (%x, %s, %a, %b, %c, %d, %e, %g)
}
)");
}

TEST(DTypeExtText, NarrowAndStringConstantsAreChecked) {
  // Beyond the type's range: an error, not a saturated value.
  EXPECT_NE(parseError("def @f() { const[(1,), float8e4m3fn]([500]) }")
                .find("out of range for float8e4m3fn"),
            std::string::npos);
  EXPECT_NE(parseError("def @f() { const[(1,), int4]([8]) }")
                .find("out of range for int4"),
            std::string::npos);
  EXPECT_NE(parseError("def @f() { const[(1,), int4]([1.5]) }")
                .find("out of range for int4"),
            std::string::npos);
  EXPECT_NE(parseError("def @f() { const[(1,), string]([1]) }")
                .find("expected a quoted string for a string constant"),
            std::string::npos);
  EXPECT_NE(parseError(R"(def @f() { const[(1,), float32](["1"]) })")
                .find("a string literal in a float32 constant"),
            std::string::npos);
}
