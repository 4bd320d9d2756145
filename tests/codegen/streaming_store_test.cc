// Streaming (non-temporal) stores: lowering marks the store of an output of
// at least kStreamingStoreMinBytes written row by row in order, and the x86-64
// backend turns the aligned part of its loop into non-temporal vector
// stores followed by an sfence; smaller outputs, short rows, outputs read
// back by the kernel and other targets keep ordinary stores. Every case
// agrees with the interpreter, at 1, 2 and 4 threads, from output buffers
// at any element offset.

#include "codegen/CodegenTestUtil.h"
#include "codegen/StreamingStores.h"
#include "kernels/Threading.h"

#include <cstring>
#include <map>

using namespace rivet;
using namespace rivet::test;

namespace {

/// Restores the default thread count when a test ends.
struct ThreadsGuard {
  ~ThreadsGuard() { setNumThreads(0); }
};

const char *kChain = "let %a = multiply(%p0, 2.0);\n"
                     "let %b = add(%a, 1.0);\n"
                     "let %s = sigmoid(%b);\n"
                     "multiply(%s, %p0)";

/// Just over the threshold in float32 elements, odd so that the aligned
/// part of the loop has a remainder.
constexpr int64_t kLarge = codegen::kStreamingStoreMinBytes / 4 + 3;

bool isMarkedStreaming(const codegen::LoweredKernel &L) {
  return codegen::printLoopKernel(L.kernel).find("// streaming") !=
         std::string::npos;
}

/// Non-temporal stores of vectors in the optimized LLVM IR of L (for the
/// host).
size_t nontemporalVectorStores(const codegen::LoweredKernel &L,
                               const codegen::TargetOptions &T = {}) {
  std::string IR = codegen::emitLLVMIR(L.kernel, T);
  size_t N = 0;
  size_t Pos = 0;
  while ((Pos = IR.find("store <", Pos)) != std::string::npos) {
    size_t End = IR.find('\n', Pos);
    if (IR.substr(Pos, End - Pos).find("!nontemporal") != std::string::npos)
      ++N;
    Pos = End;
  }
  return N;
}

/// Prefetches in the host's optimized IR of L (a streaming loop prefetches
/// what its vector loads read, a few KB ahead).
size_t prefetches(const codegen::LoweredKernel &L) {
  std::string IR = codegen::emitLLVMIR(L.kernel);
  size_t N = 0;
  for (size_t Pos = 0;
       (Pos = IR.find("call void @llvm.prefetch", Pos)) != std::string::npos;
       ++Pos)
    ++N;
  return N;
}

/// Whether the host's code of L fences its non-temporal stores.
bool hasStoreFence(const codegen::LoweredKernel &L) {
  return codegen::emitLLVMIR(L.kernel).find("@llvm.x86.sse.sfence") !=
         std::string::npos;
}

/// Whether the host streams (x86-64; other targets keep ordinary stores).
bool hostIsX86() {
  return codegen::hostTarget().triple.rfind("x86_64", 0) == 0;
}

/// L's output streams: its loop kernel marks the store, and on the host
/// (when x86-64) the code has non-temporal vector stores.
void expectStreams(const codegen::LoweredKernel &L) {
  EXPECT_TRUE(isMarkedStreaming(L)) << codegen::printLoopKernel(L.kernel);
  if (hostIsX86()) {
    EXPECT_GT(nontemporalVectorStores(L), 0u);
    EXPECT_GT(prefetches(L), 0u);
  }
}

/// Runs the kernel of L on M's inputs writing into a buffer that starts
/// Offset elements past a 64-byte boundary, at 1, 2 and 4 threads, and
/// compares with the interpreter.
void expectMatchesAtOffset(const ir::Module &M, const codegen::LoweredKernel &L,
                           const SizeMap &S, int64_t Offset) {
  SCOPED_TRACE(fmt::format("output offset {} elements", Offset));
  // Compiled once per kernel (the JIT refuses a name twice).
  static std::map<std::string, RivetKernelFn> Compiled;
  RivetKernelFn &Fn = Compiled[L.kernel.name];
  if (!Fn)
    Fn = testJit().compile(L.kernel);
  std::vector<Tensor> Inputs = randomInputs(M, S, 5);
  ir::Interpreter Interp(M);
  std::vector<ir::Value> Args(Inputs.begin(), Inputs.end());
  Tensor Expected = Interp.call("main", Args).tensor();
  Shape Padded{Expected.numel() + Offset};
  Tensor Storage = Tensor::empty(Padded, Expected.dtype());
  size_t ElemBytes = dtypeSize(Expected.dtype());
  std::vector<void *> Buffers;
  std::vector<std::vector<int64_t>> Shapes;
  for (const Tensor &T : Inputs) {
    Buffers.push_back(T.rawData());
    Shapes.push_back(T.shape());
  }
  Buffers.push_back(static_cast<char *>(Storage.rawData()) +
                    (size_t)Offset * ElemBytes);
  Shapes.push_back(Expected.shape());
  std::vector<int64_t> Dims = codegen::sizeParamValues(L, Shapes);
  ThreadsGuard Guard;
  for (int T : {1, 2, 4}) {
    SCOPED_TRACE(fmt::format("{} thread(s)", T));
    setNumThreads(T);
    std::memset(Storage.rawData(), 0, Storage.nbytes());
    Fn(Buffers.data(), Dims.data(), testRuntime());
    Tensor Out = Tensor::empty(Expected.shape(), Expected.dtype());
    std::memcpy(Out.rawData(), Buffers.back(), Out.nbytes());
    EXPECT_TRUE(allClose(Out, Expected, 1e-5, 1e-6));
  }
}

TEST(StreamingStore, LargeStaticChainStreamsAndMatches) {
  ir::Module M =
      parsePrimitive({fmt::format("Tensor[({}), float32]", kLarge)}, kChain);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("large_chain"));
  ASSERT_TRUE(isMarkedStreaming(L)) << codegen::printLoopKernel(L.kernel);
  if (hostIsX86()) {
    EXPECT_GT(nontemporalVectorStores(L), 0u) << codegen::emitLLVMIR(L.kernel);
    EXPECT_TRUE(hasStoreFence(L));
    EXPECT_GT(prefetches(L), 0u);
  }
  for (int64_t Offset : {0, 1, 7, 15})
    expectMatchesAtOffset(M, L, {}, Offset);
}

TEST(StreamingStore, SmallStaticChainKeepsOrdinaryStores) {
  ir::Module M = parsePrimitive({"Tensor[(100003), float32]"}, kChain);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("small_chain"));
  EXPECT_FALSE(isMarkedStreaming(L)) << codegen::printLoopKernel(L.kernel);
  EXPECT_EQ(nontemporalVectorStores(L), 0u);
  EXPECT_FALSE(hasStoreFence(L));
  EXPECT_EQ(prefetches(L), 0u);
  expectMatchesAtOffset(M, L, {}, 3);
}

TEST(StreamingStore, LargeRowsStreamRowByRow) {
  // 2048 rows of 2049 floats (8 KB each) with a broadcast row operand: every
  // row starts at a different offset from a cache line.
  ir::Module M = parsePrimitive(
      {"Tensor[(2048, 2049), float32]", "Tensor[(2049), float32]"},
      "let %a = add(%p0, %p1);\nsigmoid(%a)");
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("large_rows"));
  expectStreams(L);
  expectMatchesAtOffset(M, L, {}, 0);
  expectMatchesAtOffset(M, L, {}, 9);
}

TEST(StreamingStore, ShortRowsKeepOrdinaryStores) {
  // As many bytes as above, in rows of 12 bytes.
  ir::Module M =
      parsePrimitive({"Tensor[(1400000, 3), float32]"}, "multiply(%p0, 3.0)");
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("short_rows"));
  EXPECT_FALSE(isMarkedStreaming(L)) << codegen::printLoopKernel(L.kernel);
  EXPECT_EQ(nontemporalVectorStores(L), 0u);
}

TEST(StreamingStore, ByteOutputStreams) {
  // A bool output: one byte per element, up to 63 of them before the first
  // line boundary.
  ir::Module M =
      parsePrimitive({fmt::format("Tensor[({}), float32]",
                                  codegen::kStreamingStoreMinBytes + 101)},
                     "greater(%p0, 0.25)");
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("bytes"));
  expectStreams(L);
  expectMatchesAtOffset(M, L, {}, 0);
  expectMatchesAtOffset(M, L, {}, 37);
}

TEST(StreamingStore, SymbolicSizeDecidesAtRunTime) {
  ir::Module M = parsePrimitive({"Tensor[(n), float32]"}, kChain);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("symbolic"));
  expectStreams(L);
  // Below the threshold (the ordinary loop), then above it.
  for (int64_t N : {int64_t(1), int64_t(17), int64_t(100003), kLarge})
    expectMatchesAtOffset(M, L, {{"n", N}}, N % 13);
}

TEST(StreamingStore, OutputReadBackKeepsOrdinaryStores) {
  // softmax stores each row's exponentials into the output, then rescales
  // them in place: the output is stored twice and loaded.
  ir::Module M =
      parsePrimitive({"Tensor[(4096, 1025), float32]"}, "softmax(%p0, axis=1)");
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("softmax"));
  EXPECT_FALSE(isMarkedStreaming(L)) << codegen::printLoopKernel(L.kernel);
  EXPECT_EQ(nontemporalVectorStores(L), 0u);
  expectMatchesAtOffset(M, L, {}, 0);
}

TEST(StreamingStore, OtherTargetsKeepOrdinaryStores) {
  ir::Module M =
      parsePrimitive({fmt::format("Tensor[({}), float32]", kLarge)}, kChain);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("aarch64"));
  ASSERT_TRUE(isMarkedStreaming(L));
  codegen::TargetOptions Arm;
  Arm.triple = "aarch64-unknown-linux-gnu";
  Arm.cpu = "generic";
  std::string IR = codegen::emitLLVMIR(L.kernel, Arm);
  EXPECT_EQ(IR.find("!nontemporal"), std::string::npos);
  EXPECT_EQ(IR.find("sfence"), std::string::npos);
}

TEST(StreamingStore, ConditionIsARunTimeCheckOnlyForSymbolicShapes) {
  // Static: folded (true over the threshold, and the store is marked).
  codegen::LoweredKernel Static = lowerOrFail(
      parsePrimitive({fmt::format("Tensor[({}), float32]", kLarge)}, kChain),
      uniqueKernelName("static_condition"));
  int Out = (int)Static.kernel.buffers.size() - 1;
  codegen::LoopExpr Cond = codegen::streamingCondition(Static.kernel, Out);
  ASSERT_TRUE(Cond->isConst());
  EXPECT_EQ(Cond->intValue, 1);
  // A symbolic number of rows of 1200 bytes: only the total size is left
  // to check at run time.
  codegen::LoweredKernel Rows =
      lowerOrFail(parsePrimitive({"Tensor[(n, 300), float32]"}, kChain),
                  uniqueKernelName("rows_condition"));
  Cond = codegen::streamingCondition(Rows.kernel, Out);
  std::string Text = codegen::printLoopExpr(Cond, &Rows.kernel);
  EXPECT_FALSE(Cond->isConst()) << Text;
  EXPECT_EQ(Text.find("and"), std::string::npos) << Text;
  EXPECT_NE(Text.find("ge("), std::string::npos) << Text;
}

} // namespace
