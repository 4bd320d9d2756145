//===- DnnlMatMul.cc - matmul, dense and gemm on oneDNN -------------------===//
//
// All three are oneDNN's matmul primitive over plain (possibly transposed,
// via strides) operands: its AVX2/AVX-512 GEMM wants no weight reorder, so
// nothing is copied; a large product with nothing to fuse runs on oneDNN's
// sgemm instead (runSgemm). Dense flattens x's leading dims into M; gemm's
// alpha is an output scale and beta * c a sum post-op over c pre-broadcast into
// out. A dense on several threads runs as parts on the runtime's pool (ranges
// of rows, or of columns when it has few rows), like a blocked conv; one
// with a single row is a matrix-vector product (DenseGemv.h).
//
//===----------------------------------------------------------------------===//
#include "kernels/dnnl/DnnlAnchors.h"

#include "kernels/DnnlConfig.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"
#include "kernels/cpu/DenseGemv.h"
#include "kernels/cpu/SmallGemm.h"
#include "kernels/dnnl/DnnlContext.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace rivet {

using namespace dnnlctx;
using dnnl::memory;

namespace {

constexpr int kMaxRank = DNNL_MAX_NDIMS;

/// How a matmul operand's buffer is viewed: dims and strides in elements,
/// in fixed arrays so that describing a call allocates nothing.
struct OperandView {
  int rank = 0;
  int64_t dims[kMaxRank] = {}, strides[kMaxRank] = {};

  /// Row-major over Dims (Rank <= kMaxRank).
  static OperandView plain(const int64_t *Dims, size_t Rank) {
    OperandView V;
    V.rank = (int)Rank;
    int64_t Stride = 1;
    for (size_t I = Rank; I-- > 0;) {
      V.dims[I] = Dims[I];
      V.strides[I] = Stride;
      Stride *= std::max<int64_t>(Dims[I], 1);
    }
    return V;
  }
  static OperandView plain(std::initializer_list<int64_t> Dims) {
    return plain(Dims.begin(), Dims.size());
  }
  static OperandView strided(std::initializer_list<int64_t> Dims,
                             std::initializer_list<int64_t> Strides) {
    OperandView V;
    V.rank = (int)Dims.size();
    std::copy(Dims.begin(), Dims.end(), V.dims);
    std::copy(Strides.begin(), Strides.end(), V.strides);
    return V;
  }

  void addTo(PrimitiveKey &K) const {
    K.addList(dims, (size_t)rank);
    K.addList(strides, (size_t)rank);
  }
  memory::desc desc() const {
    return stridedDesc(memory::dims(dims, dims + rank),
                       memory::dims(strides, strides + rank));
  }
};

/// Primitive cache key tag of a matmul (other kinds use other tags).
constexpr int64_t kMatMulTag = 0x6d61746d756c; // "matmul"
/// Post-op key tag of gemm's beta * c (planPostOps' tags are small).
constexpr int64_t kGemmSumTag = 0x73756d; // "sum"

/// Multiply-adds from which a matrix product runs on oneDNN's sgemm: below
/// the parts of a dense (from 2^17), where the two are alike (64^3 and
/// 32x64x64: within 3%); tiny products keep the cached primitive.
constexpr int64_t kSgemmMinWork = int64_t(1) << 16;
std::atomic<int64_t> SgemmCalls{0};

/// One matrix of a view whose leading axes are all 1: rows and columns,
/// 'N' or 'T' as sgemm reads it (row-major), and its leading dimension.
struct GemmOperand {
  int64_t rows = 0, cols = 0, ld = 0;
  char trans = 0; // 0: not one matrix sgemm can read
};

GemmOperand gemmOperand(const OperandView &V) {
  GemmOperand G;
  if (V.rank < 2)
    return G;
  for (int I = 0; I + 2 < V.rank; ++I)
    if (V.dims[I] != 1)
      return G;
  G.rows = V.dims[V.rank - 2];
  G.cols = V.dims[V.rank - 1];
  int64_t RS = V.strides[V.rank - 2], CS = V.strides[V.rank - 1];
  if (CS == 1 && RS >= std::max<int64_t>(G.cols, 1)) {
    G.trans = 'N';
    G.ld = RS;
  } else if (RS == 1 && CS >= std::max<int64_t>(G.rows, 1)) {
    G.trans = 'T';
    G.ld = CS;
  }
  return G;
}

/// Dst = Alpha * Src @ Wts on oneDNN's sgemm, its JIT GEMM that packs both
/// operands per call, where that applies: one product of plain or
/// transposed matrices, of at least kSgemmMinWork multiply-adds, weights
/// not packed ahead, no bias and no post-op but gemm's beta * c (sgemm's
/// beta). For such products oneDNN 2.6's matmul primitive picks its brgemm
/// kernel on AVX-512 hosts, slower at every size tried on a Sapphire
/// Rapids core: 1024^3 104-117 vs 90-105 GFLOP/s, 16x512x512 131 vs 76
/// (docs/benchmarks.md); on an AVX2 host the primitive runs this same GEMM.
/// Returns nullopt where it does not apply.
std::optional<bool> runSgemm(const Tensor &Src, const OperandView &SrcV,
                             const Tensor &Wts, const OperandView &WtsV,
                             const Tensor *Bias, Tensor &Out,
                             const OperandView &DstV, float Alpha,
                             const PostOpPlan &Plan, bool PackedWeights) {
  if (PackedWeights || Bias || Plan.ops.len() > 1 ||
      (Plan.ops.len() == 1 && Plan.ops.kind(0) != dnnl::primitive::kind::sum))
    return std::nullopt;
  GemmOperand A = gemmOperand(SrcV), B = gemmOperand(WtsV),
              C = gemmOperand(DstV);
  if (!A.trans || !B.trans || C.trans != 'N' || A.cols != B.rows ||
      C.rows != A.rows || C.cols != B.cols ||
      A.rows * B.cols * A.cols < kSgemmMinWork)
    return std::nullopt;
  float Beta = 0.f;
  if (Plan.ops.len() == 1)
    Plan.ops.get_params_sum(0, Beta);
  WorkScope Scope(C.rows * C.cols * A.cols);
  threadStream(); // applies the thread count to oneDNN's OpenMP runtime
  if (dnnl_sgemm(A.trans, B.trans, C.rows, C.cols, A.cols, Alpha,
                 Src.data<float>(), A.ld, Wts.data<float>(), B.ld, Beta,
                 Out.data<float>(), C.ld) != dnnl_success)
    return false; // the reference kernel overwrites all of Out
  SgemmCalls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

/// One matmul call: Dst = post(Alpha * Src @ Wts + Bias). The views say how
/// the tensors' buffers are read; Bias has rank 0 when absent. With
/// PackedWeights (constant Wts) the weights are read in the layout oneDNN
/// picks, copied once and cached.
bool runMatMul(const Tensor &Src, const OperandView &SrcV, const Tensor &Wts,
               const OperandView &WtsV, const Tensor *Bias,
               const OperandView &BiasV, Tensor &Out, const OperandView &DstV,
               float Alpha, const PostOpPlan &Plan,
               bool PackedWeights = false) {
  if (std::optional<bool> Ran = runSgemm(Src, SrcV, Wts, WtsV, Bias, Out, DstV,
                                         Alpha, Plan, PackedWeights))
    return *Ran;
  WorkScope Scope(
      SrcV.rank == 0 ? 0 : (int64_t)Out.numel() * SrcV.dims[SrcV.rank - 1]);
  thread_local PrimitiveKey Key;
  Key.clear();
  Key.add(kMatMulTag);
  SrcV.addTo(Key);
  WtsV.addTo(Key);
  Key.add(Bias != nullptr);
  if (Bias)
    BiasV.addTo(Key);
  DstV.addTo(Key);
  Key.addFloat(Alpha);
  Key.addList(Plan.key.words.data(), Plan.key.words.size());
  Key.add(PackedWeights);
  auto Prim = findPrimitive(Key, [&] {
    dnnl::primitive_attr Attr = baseAttr();
    Attr.set_post_ops(Plan.ops);
    if (Alpha != 1.f)
      Attr.set_output_scales(0, {Alpha});
    CachedPrimitive C;
    C.src = SrcV.desc();
    C.weights =
        PackedWeights
            ? memory::desc(memory::dims(WtsV.dims, WtsV.dims + WtsV.rank),
                           memory::data_type::f32, memory::format_tag::any)
            : WtsV.desc();
    C.dst = DstV.desc();
    if (Bias)
      C.bias = BiasV.desc();
    dnnl::matmul::desc D =
        Bias ? dnnl::matmul::desc(C.src, C.weights, C.bias, C.dst)
             : dnnl::matmul::desc(C.src, C.weights, C.dst);
    dnnl::matmul::primitive_desc PD(D, Attr, engine());
    C.weights = PD.weights_desc();
    C.prim = dnnl::matmul(PD);
    C.scratchpad = PD.scratchpad_desc();
    return C;
  });
  if (!Prim->prim)
    return false;
  try {
    ThreadMemories &M = threadMemories(Prim);
    M.src.set_data_handle(Src.rawData());
    if (PackedWeights)
      M.weights = weightsIn(Wts, WtsV.desc(), Prim->weights, true);
    else
      M.weights.set_data_handle(Wts.rawData());
    M.dst.set_data_handle(Out.rawData());
    thread_local std::vector<dnnl_exec_arg_t> Args;
    Args.assign({{DNNL_ARG_SRC, M.src.get()},
                 {DNNL_ARG_WEIGHTS, M.weights.get()},
                 {DNNL_ARG_DST, M.dst.get()}});
    if (Bias) {
      M.bias.set_data_handle(Bias->rawData());
      Args.push_back({DNNL_ARG_BIAS, M.bias.get()});
    }
    // Binary post-op operands are rare here: wrapped per call.
    std::vector<memory> Operands;
    addPostOpArgs(Plan, Args, Operands);
    executePrimitive(*Prim, Args);
    threadStream().wait();
  } catch (const dnnl::error &) {
    return false; // the reference kernel overwrites all of Out
  }
  return true;
}

bool anyEmpty(std::initializer_list<const Tensor *> Ts) {
  for (const Tensor *T : Ts)
    if (T && T->numel() == 0)
      return true;
  return false;
}

/// The plan of an empty post-op list, shared: building one per call would
/// create a oneDNN post_ops object (an allocation) for nothing.
const PostOpPlan &noPostOps() {
  static const PostOpPlan P;
  return P;
}

/// Multiply-adds from which a dense on several threads runs as parts.
std::atomic<int64_t> DensePartsMinWork{int64_t(1) << 18};
std::atomic<int64_t> DensePartsCalls{0};
/// Columns a part takes at least, a multiple of oneDNN's blocks of packed
/// weights (16 to 64 columns).
constexpr int64_t kDensePartColumns = 64;

/// A binary post-op operand T of a dense whose output is [M, N] (leading
/// axes flattened) as it meets rows [R0, R0 + R) or columns [C0, C0 + C)
/// of the output (R, C < 0: all of them): a view, or an undefined tensor
/// when that part of T is not contiguous. T broadcasts to the output.
Tensor operandPart(const Tensor &T, int64_t M, int64_t N, int64_t R0, int64_t R,
                   int64_t C0, int64_t C) {
  int64_t Cols = T.rank() == 0 ? 1 : T.shape().back();
  int64_t Rows = T.numel() / std::max<int64_t>(Cols, 1);
  if (Rows != 1 && Rows != M)
    return Tensor(); // broadcast along some leading axes only
  bool AllRows = R < 0 || Rows == 1, AllCols = C < 0 || Cols == 1;
  if (!AllCols && Rows != 1)
    return Tensor(); // columns of several rows: strided
  int64_t R1 = AllRows ? Rows : R, C1 = AllCols ? Cols : C;
  return viewOf(T, (AllRows ? 0 : R0) * Cols + (AllCols ? 0 : C0), {R1, C1});
}

/// A dense (x [M, K] @ w[N, K]^T, elementwise tail) split into parts:
/// ranges of rows of x and out, or, with few rows, ranges of columns of
/// out (rows of w, a contiguous range; constant weights are packed per
/// part, once). The tail's operands are sliced alike (operandPart).
struct DenseParts {
  const Tensor &X, &W;
  const PostOps &Post;
  Tensor &Out;
  int64_t M, N, K, parts;
  bool byRows, constantWeights;

  /// Part P's rows [R0, R0 + R) and columns [C0, C0 + C).
  void range(int64_t P, int64_t &R0, int64_t &R, int64_t &C0,
             int64_t &C) const {
    R0 = 0, R = M, C0 = 0, C = N;
    if (byRows) {
      R0 = M * P / parts;
      R = M * (P + 1) / parts - R0;
    } else { // whole blocks of columns; the last part takes the rest
      int64_t Blocks = N / kDensePartColumns;
      C0 = Blocks * P / parts * kDensePartColumns;
      C = (P + 1 == parts ? N : Blocks * (P + 1) / parts * kDensePartColumns) -
          C0;
    }
  }

  /// The tail with its operands sliced for rows [R0, R0 + R) and columns
  /// [C0, C0 + C), or nullopt when a part cannot take one of them.
  std::optional<PostOps> postFor(int64_t R0, int64_t R, int64_t C0,
                                 int64_t C) const {
    PostOps Part = Post;
    for (PostOp &Op : Part)
      if (Op.isBinary()) {
        Op.operand = operandPart(Op.operand, M, N, R0, byRows ? R : -1, C0,
                                 byRows ? -1 : C);
        if (!Op.operand.defined())
          return std::nullopt;
      }
    return Part;
  }

  bool run(int64_t P) const {
    WorkScope OneThread(0);
    int64_t R0, R, C0, C;
    range(P, R0, R, C0, C);
    std::optional<PostOps> PartPost = postFor(R0, R, C0, C);
    std::optional<PostOpPlan> Plan;
    if (PartPost && !PartPost->empty())
      Plan = planPostOps(*PartPost, {R, C}, {R, C}, {0, 1});
    if (!PartPost || (!PartPost->empty() && !Plan))
      return false;
    // Out's rows [R0, R0 + R) and columns [C0, C0 + C) are contiguous but
    // for a range of columns of several rows, which is computed apart and
    // copied: oneDNN 2.6 runs a matmul into a strided destination on its
    // reference kernel.
    bool Apart = R > 1 && C < N;
    Tensor OutPart = Apart ? Tensor::empty({R, C}, DType::Float32)
                           : viewOf(Out, R0 * N + C0, {R, C});
    if (!runMatMul(viewOf(X, R0 * K, {R, K}), OperandView::plain({R, K}),
                   viewOf(W, C0 * K, {C, K}),
                   OperandView::strided({K, C}, {1, K}), nullptr, OperandView(),
                   OutPart, OperandView::plain({R, C}), 1.f,
                   Plan ? *Plan : noPostOps(), constantWeights))
      return false;
    if (Apart)
      for (int64_t Row = 0; Row < R; ++Row)
        std::memcpy(Out.data<float>() + (R0 + Row) * N + C0,
                    OutPart.data<float>() + Row * C, (size_t)C * sizeof(float));
    return true;
  }
};

/// Post with a leading add of Bias.
PostOps withBias(const Tensor &Bias, const PostOps &Post) {
  PostOps P;
  P.push_back(makePostOp(PostOp::Kind::Add, {}, Bias));
  P.insert(P.end(), Post.begin(), Post.end());
  return P;
}

/// Runs a dense as parts on the runtime's pool, each an ordinary
/// one-thread oneDNN call on views, taken by the pool's threads as they
/// come (oneDNN's own OpenMP region would wait for a sleeping worker). With
/// few rows a dense streams its weights once, and each core reading half of
/// them takes half the time: mobilenet_v2's classifier (1 x 1280 @ 1280 x
/// 1000, bias) ran in the same 0.52-0.56 ms on one thread and two, as ONNX
/// Runtime's does in 0.48 and 0.26. Nullopt when it does not split (one
/// thread, too little work, an operand a part cannot take), else whether
/// oneDNN ran every part.
std::optional<bool> runDenseInParts(const Tensor &X, const Tensor &W,
                                    const Tensor *Bias, const PostOps &Post,
                                    Tensor &Out, bool ConstantWeights,
                                    int64_t M, int64_t N, int64_t K) {
  int64_t Threads = numThreads(), MinWork = densePartsMinWork();
  if (Threads < 2 || M * N * K < MinWork)
    return std::nullopt;
  // Rows when each thread gets a few; else columns, whole blocks of them.
  bool ByRows = M >= 4 * Threads;
  int64_t Units = ByRows ? M : N / kDensePartColumns;
  int64_t Parts =
      std::min<int64_t>({2 * Threads, Units, M * N * K / (MinWork / 2 + 1)});
  if (Parts < 2)
    return std::nullopt;
  // A bias joins the tail (as in dnnl.dense_fused), so parts slice it too.
  PostOps Tail = Bias ? withBias(*Bias, Post) : Post;
  DenseParts P{X, W, Tail, Out, M, N, K, Parts, ByRows, ConstantWeights};
  int64_t R0, R, C0, C;
  P.range(0, R0, R, C0, C); // every part's operands slice alike
  if (!P.postFor(R0, R, C0, C))
    return std::nullopt;
  DensePartsCalls.fetch_add(1, std::memory_order_relaxed);
  return runPartsOnPool(Parts, [&](int64_t Part) { return P.run(Part); });
}

std::atomic<int64_t> DenseGemvCalls{0};

/// Whether a dense of M rows of x by w [N, K] runs as M matrix-vector
/// products: one row always; a few while w stays in cache between them. A
/// oneDNN matmul call costs about 7 us whatever its size (2 x 32 by 32 x
/// 128, an RNN step's: 7.7 us; as two products: 0.3 us).
bool fewDenseRows(int64_t M, int64_t N, int64_t K) {
  return M <= 2 || (M <= 8 && N * K <= (int64_t(1) << 16));
}

/// A dense whose x has few rows (fewDenseRows), as matrix-vector products
/// (DenseGemv.h): on the runtime's pool in ranges of output columns (rows
/// of w) when it has a dense's parallel work, each range for every row,
/// then the tail on the output by the reference kernels.
bool runDenseGemv(const Tensor &X, const Tensor &W, const Tensor *Bias,
                  const PostOps &Post, Tensor &Out, int64_t M, int64_t N,
                  int64_t K) {
  struct Rows {
    const float *x, *w, *bias;
    int64_t m, n, k;
    float *out;
  } R{X.data<float>(),
      W.data<float>(),
      Bias ? Bias->data<float>() : nullptr,
      M,
      N,
      K,
      Out.data<float>()};
  int64_t Grain = M * N * K >= densePartsMinWork() ? kDensePartColumns : N;
  kernelRuntime().parallelFor(
      N, Grain, &R, [](void *Closure, int64_t Begin, int64_t End) {
        const auto &R = *static_cast<const Rows *>(Closure);
        for (int64_t Row = 0; Row < R.m; ++Row)
          denseGemvRows(R.x + Row * R.k, R.w, R.bias, R.k, Begin, End,
                        R.out + Row * R.n);
      });
  if (!Post.empty())
    applyPostOpsReference(Out, Post);
  DenseGemvCalls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::atomic<int64_t> SmallGemmCalls{0};

/// Whether T is a per-column operand of an [M, N] output: N values along
/// its last axis, every other axis 1.
bool perColumn(const Tensor &T, int64_t N) {
  return T.dtype() == DType::Float32 && T.rank() >= 1 &&
         T.shape().back() == N && T.numel() == N;
}

/// Out [M, N] = A [M, K] @ B (B [K, N] with row stride Ldb) + Bias, then
/// the tail, on smallGemm (SmallGemm.h). A leading add of a per-column
/// operand (a bias the fusion put in the tail) becomes its bias, an add of
/// an operand of Out's shape next (a residual) its addend, and a relu next
/// its epilogue; the rest of the tail runs on the output by the reference
/// kernels (which took four times the product's own time for a residual).
bool runSmallGemm(const float *A, const float *B, int64_t Ldb,
                  const Tensor *Bias, const PostOps &Post, Tensor &Out,
                  int64_t M, int64_t N, int64_t K) {
  size_t First = 0;
  const float *BiasData = Bias ? Bias->data<float>() : nullptr;
  if (!Bias && !Post.empty() && Post[0].kind == PostOp::Kind::Add &&
      perColumn(Post[0].operand, N)) {
    BiasData = Post[0].operand.data<float>();
    First = 1;
  }
  SmallGemmArgs G{A, K, B, Ldb, BiasData, Out.data<float>(), N, N, K};
  if (First < Post.size() && Post[First].kind == PostOp::Kind::Add &&
      Post[First].operand.dtype() == DType::Float32 &&
      Post[First].operand.shape() == Out.shape()) {
    G.Addend = Post[First].operand.data<float>();
    G.LdAddend = N;
    ++First;
  }
  if (First < Post.size() && Post[First].kind == PostOp::Kind::Relu) {
    G.Relu = true;
    ++First;
  }
  smallGemm(G, M);
  if (First < Post.size())
    applyPostOpsReference(Out, PostOps(Post.begin() + (long)First, Post.end()));
  SmallGemmCalls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

/// w [N, K] transposed ([K, N]) for smallGemm, into this thread's buffer;
/// small constant weights (ConstantWeights, at most 2^16 values) once per
/// thread: the last few transpositions are kept with the storage they came
/// from (held, so its address cannot come back with other values; at most
/// 4 MB per thread in all). A transposition per call was most of a short
/// sequence's dense (64 x 64 in a transformer layer); for larger weights it
/// is a small part of the product.
const float *transposedWeights(const Tensor &W, int64_t N, int64_t K,
                               bool ConstantWeights) {
  struct Kept {
    std::shared_ptr<Storage> from;
    const float *data = nullptr;
    int64_t n = 0, k = 0;
    std::vector<float> transposed;
  };
  constexpr size_t kKeptEntries = 8;
  thread_local std::array<Kept, kKeptEntries> Cache;
  thread_local size_t Next = 0;
  thread_local std::vector<float> Buffer;
  const float *Src = W.data<float>();
  ConstantWeights = ConstantWeights && N * K <= (int64_t(1) << 16);
  if (ConstantWeights)
    for (const Kept &E : Cache)
      if (E.data == Src && E.n == N && E.k == K && E.from == W.storage())
        return E.transposed.data();
  std::vector<float> *Dst = &Buffer;
  if (ConstantWeights) {
    Kept &E = Cache[Next++ % kKeptEntries];
    E.from = W.storage(), E.data = Src, E.n = N, E.k = K;
    Dst = &E.transposed;
  }
  Dst->resize((size_t)(N * K));
  for (int64_t Row = 0; Row < N; ++Row)
    for (int64_t Col = 0; Col < K; ++Col)
      (*Dst)[(size_t)(Col * N + Row)] = Src[Row * K + Col];
  return Dst->data();
}

} // namespace

int64_t smallGemmCalls() { return SmallGemmCalls.load(); }
int64_t denseGemvCalls() { return DenseGemvCalls.load(); }

int64_t densePartsMinWork() {
  return DensePartsMinWork.load(std::memory_order_relaxed);
}
void setDensePartsMinWork(int64_t Work) { DensePartsMinWork.store(Work); }
int64_t densePartsCalls() { return DensePartsCalls.load(); }
int64_t sgemmCalls() { return SgemmCalls.load(); }

bool dnnlMatMul(const Tensor &A, const Tensor &B, const PostOps &Post,
                Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&A, &B, &Out}) || A.rank() < 1 ||
      B.rank() < 1 || anyEmpty({&A, &B, &Out}))
    return false;
  const Shape &ShA = A.shape(), &ShB = B.shape();
  bool AVec = ShA.size() == 1, BVec = ShB.size() == 1;
  // Both operands as matrices (a vector a is [1, K], b [K, 1]) with the
  // same number R of axes, unit batch axes in front.
  size_t RA = ShA.size() + AVec, RB = ShB.size() + BVec;
  size_t R = std::max(RA, RB);
  if (R > (size_t)kMaxRank)
    return false;
  int64_t SA[kMaxRank], SB[kMaxRank], Dst[kMaxRank];
  std::fill(SA, SA + R, 1);
  std::fill(SB, SB + R, 1);
  std::copy(ShA.begin(), ShA.end(), SA + (R - RA) + AVec);
  std::copy(ShB.begin(), ShB.end(), SB + (R - RB));
  int64_t M = SA[R - 2], K = SA[R - 1], N = SB[R - 1];
  if (SB[R - 2] != K)
    return false;
  for (size_t I = 0; I + 2 < R; ++I) {
    if (SA[I] != SB[I] && SA[I] != 1 && SB[I] != 1)
      return false;
    Dst[I] = SA[I] == 1 ? SB[I] : SA[I];
  }
  Dst[R - 2] = M;
  Dst[R - 1] = N;
  int64_t DstElems = 1;
  for (size_t I = 0; I < R; ++I)
    DstElems *= Dst[I];
  if (DstElems != Out.numel())
    return false;
  // b one matrix (its batch axes all 1): a's batch axes are more rows.
  bool BMatrix = std::all_of(SB, SB + R - 2, [](int64_t E) { return E == 1; });
  int64_t Rows = A.numel() / K;
  if (!AVec && !BVec && BMatrix && smallGemmApplies(Rows, N, K))
    return runSmallGemm(A.data<float>(), B.data<float>(), N, nullptr, Post, Out,
                        Rows, N, K);
  std::optional<PostOpPlan> Plan;
  if (!Post.empty()) {
    // The logical output drops the unit axes of vector operands and may
    // have fewer batch axes than R - 2.
    std::vector<int> OutToDst;
    size_t OutBatch = (size_t)Out.rank() - (AVec ? 0 : 1) - (BVec ? 0 : 1);
    for (size_t I = 0; I < OutBatch; ++I)
      OutToDst.push_back((int)(R - 2 - OutBatch + I));
    if (!AVec)
      OutToDst.push_back((int)R - 2);
    if (!BVec)
      OutToDst.push_back((int)R - 1);
    Plan = planPostOps(Post, Out.shape(), memory::dims(Dst, Dst + R), OutToDst);
    if (!Plan)
      return false;
  }
  return runMatMul(A, OperandView::plain(SA, R), B, OperandView::plain(SB, R),
                   nullptr, OperandView(), Out, OperandView::plain(Dst, R), 1.f,
                   Plan ? *Plan : noPostOps());
}

bool dnnlDense(const Tensor &X, const Tensor &W, const Tensor *Bias,
               const PostOps &Post, Tensor &Out, bool ConstantWeights) {
  if (!dnnlEnabled() || !allFloat32({&X, &W, Bias, &Out}) || X.rank() < 1 ||
      W.rank() != 2 || anyEmpty({&X, &W, &Out}))
    return false;
  int64_t K = X.shape().back(), N = W.shape()[0];
  if (W.shape()[1] != K ||
      (Bias && (Bias->rank() != 1 || Bias->shape()[0] != N)))
    return false;
  int64_t M = X.numel() / K;
  if (fewDenseRows(M, N, K))
    return runDenseGemv(X, W, Bias, Post, Out, M, N, K);
  if (smallGemmApplies(M, N, K))
    return runSmallGemm(X.data<float>(),
                        transposedWeights(W, N, K, ConstantWeights), N, Bias,
                        Post, Out, M, N, K);
  if (std::optional<bool> Ran =
          runDenseInParts(X, W, Bias, Post, Out, ConstantWeights, M, N, K))
    return *Ran;
  std::optional<PostOpPlan> Plan;
  if (!Post.empty()) {
    std::vector<int> OutToDst(Out.shape().size(), 0);
    OutToDst.back() = 1;
    Plan = planPostOps(Post, Out.shape(), {M, N}, OutToDst);
    if (!Plan)
      return false;
  }
  // w is [N, K] row-major, i.e. [K, N] with strides (1, K).
  return runMatMul(X, OperandView::plain({M, K}), W,
                   OperandView::strided({K, N}, {1, K}), Bias,
                   OperandView::plain({1, N}), Out, OperandView::plain({M, N}),
                   1.f, Plan ? *Plan : noPostOps(), ConstantWeights);
}

bool dnnlGemm(const Tensor &A, const Tensor &B, const Tensor *C, bool TransA,
              bool TransB, double Alpha, double Beta, Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&A, &B, C, &Out}) || A.rank() != 2 ||
      B.rank() != 2 || Out.rank() != 2 || anyEmpty({&A, &B, &Out}))
    return false;
  int64_t M = Out.shape()[0], N = Out.shape()[1];
  int64_t K = A.shape()[TransA ? 0 : 1];
  if (C && C->rank() > 2)
    return false;
  PostOpPlan Plan;
  if (C) {
    // out = c broadcast to [M, N]; the sum post-op adds beta * out.
    Shape SC = C->shape();
    SC.insert(SC.begin(), 2 - SC.size(), 1);
    if ((SC[0] != 1 && SC[0] != M) || (SC[1] != 1 && SC[1] != N))
      return false;
    const float *PC = C->data<float>();
    float *PO = Out.data<float>();
    int64_t RS = SC[0] == 1 ? 0 : SC[1], CS = SC[1] == 1 ? 0 : 1;
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J)
        PO[I * N + J] = PC[I * RS + J * CS];
    Plan.ops.append_sum((float)Beta);
    Plan.key.add(kGemmSumTag);
    Plan.key.addFloat((float)Beta);
  }
  OperandView AV = TransA ? OperandView::strided({M, K}, {1, M})
                          : OperandView::strided({M, K}, {K, 1});
  OperandView BV = TransB ? OperandView::strided({K, N}, {1, K})
                          : OperandView::strided({K, N}, {N, 1});
  return runMatMul(A, AV, B, BV, nullptr, OperandView(), Out,
                   OperandView::plain({M, N}), (float)Alpha, Plan);
}

} // namespace rivet
