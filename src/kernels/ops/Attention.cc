//===- Attention.cc - Scaled dot-product attention kernel -----------------===//
//
// attention (src/ir/ops/Attention.cc) as one fused pass over the keys, as
// flash attention does it: a task takes a block of query rows of one kv
// head (the rows of every q head that shares it) and walks the keys in
// blocks: scores of the block, mask, softcap, then an online softmax (a
// running max and sum per row; what was summed before a new max is
// rescaled) and the weighted sum of the block's values, a tile of rows at a
// time (its scores stay in L1). The [B, H, Sq, T] scores exist only when
// the call asks for them (with_qk).
//
// Heads of 8 and 16 in float32 without a mask, softcap or returned scores
// take another form on AVX-512 (attendTaskRowsInLanes): 16 query rows in
// the lanes of vectors, so that a row's maximum and sum over the keys need
// no reduction across lanes. Otherwise a block of keys is packed
// transposed (8 x 8 tiles transposed in registers), so that the score loop
// runs along contiguous keys; a task of a few rows (a decoding step) takes
// dot products with the keys in place instead. Values of the compute type are
// read in place. Other float dtypes are converted while packed; sums are in
// float (double for float64, or softmax_dtype float64). With
// present_key/present_value requested, the keys and values are read back from
// them, just written (still in cache): by each task as it goes where one task
// takes all rows of a kv head (a decoding step), else all before the tasks
// start. The tasks run on the runtime's thread pool. Agrees with ONNX's
// reference (onnx/reference/ops/op_attention.py), including its corner cases: a
// row whose keys are all masked is NaN, and softcap applies to masked scores
// too (they become -softcap, not -inf).
//
//===----------------------------------------------------------------------===//
#include "kernels/HostIsa.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"
#include "kernels/cpu/Exp2Coefficients.h"
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <cmath>
#include <limits>
#include <utility>

#define RIVET_ATTN_INLINE inline __attribute__((always_inline))

namespace rivet::kernels {
namespace {

constexpr const char *AttentionOp = "attention";

/// Keys per block: a multiple of every vector width below.
constexpr int64_t kKeyBlock = 128;
/// Query rows a task aims at (over the q heads of its kv head): each block
/// of keys and values is packed once per task and read by all its rows from
/// L1; the rows' scores, sums and queries stay in L2.
constexpr int64_t kTaskRows = 128;
/// A task of fewer query rows than this (a decoding step) reads the keys in
/// place by dot products rather than packing them.
constexpr int kRowBlock = 6;

bool attentionDType(DType T) {
  return T == DType::Float16 || T == DType::BFloat16 || T == DType::Float32 ||
         T == DType::Float64;
}

//===----------------------------------------------------------------------===//
// Geometry and validation (the shape function and the kernel)
//===----------------------------------------------------------------------===//

/// Element offset of row (b, h, s) (head_size contiguous elements) of a
/// [B, H, S, D] tensor, or of head h of position s of a [B, S, H * D] one.
struct RowLayout {
  int64_t batch = 0, head = 0, seq = 0;
  static RowLayout of4d(int64_t H, int64_t S, int64_t D) {
    return {H * S * D, S * D, D};
  }
  static RowLayout of3d(int64_t H, int64_t S, int64_t D) {
    return {S * H * D, D, H * D};
  }
  /// 3-D sequence first: [S, B, H * D].
  static RowLayout of3dSeqFirst(int64_t B, int64_t H, int64_t D) {
    return {H * D, D, B * H * D};
  }
  int64_t at(int64_t B, int64_t H, int64_t S) const {
    return B * batch + H * head + S * seq;
  }
};

/// A call's extents and where its optional inputs are, validated.
struct Geometry {
  bool threeD = false;
  bool seqFirst = false; // 3-D [seq, batch, hidden] (seq_first)
  int64_t batch = 0, qHeads = 0, kvHeads = 0, seqQ = 0, seqKv = 0, past = 0,
          total = 0, headK = 0, headV = 0;
  int64_t mask = -1, pastKey = -1, pastValue = -1, nonpad = -1; // inputs
  bool withPresent = false, withQk = false;
};

bool flag(const Attrs &A, const char *Name) {
  return attrFlag(AttentionOp, A, Name);
}

/// A call's attributes, read once and validated: the schema's defaults
/// (read from no attributes, once), then the attributes the call has.
/// Looking each up by name, about 17 per call, was a tenth of a short
/// sequence's attention.
struct AttentionAttrs {
  bool hasMask = false, hasPast = false, hasNonpad = false;
  bool withPresent = false, withQk = false, causal = false, seqFirst = false;
  int64_t mode = 0; // qk_matmul_output_mode
  std::optional<double> scale;
  double softcap = 0;
  std::optional<int64_t> qHeads, kvHeads;
  std::optional<DType> softmaxDType;
};

/// Reads one attribute (Name) of A into R, validating it.
struct AttrReader {
  const char *name;
  void (*read)(AttentionAttrs &R, const Attrs &A, const char *Name);
};

template <bool AttentionAttrs::*Field>
void readFlag(AttentionAttrs &R, const Attrs &A, const char *Name) {
  R.*Field = flag(A, Name);
}

template <std::optional<int64_t> AttentionAttrs::*Field>
void readHeads(AttentionAttrs &R, const Attrs &A, const char *Name) {
  OpAttrs OA(AttentionOp, A);
  R.*Field = std::nullopt;
  if (!OA.has(Name))
    return;
  int64_t H = OA.getInt(Name);
  if (H < 1)
    fail("{}: attribute '{}' must be >= 1, got {}", AttentionOp, Name, H);
  R.*Field = H;
}

constexpr AttrReader AttrReaders[] = {
    {"has_attn_mask", readFlag<&AttentionAttrs::hasMask>},
    {"has_past", readFlag<&AttentionAttrs::hasPast>},
    {"has_nonpad_kv_seqlen", readFlag<&AttentionAttrs::hasNonpad>},
    {"with_present", readFlag<&AttentionAttrs::withPresent>},
    {"with_qk", readFlag<&AttentionAttrs::withQk>},
    {"is_causal", readFlag<&AttentionAttrs::causal>},
    {"seq_first", readFlag<&AttentionAttrs::seqFirst>},
    {"q_num_heads", readHeads<&AttentionAttrs::qHeads>},
    {"kv_num_heads", readHeads<&AttentionAttrs::kvHeads>},
    {"qk_matmul_output_mode",
     [](AttentionAttrs &R, const Attrs &A, const char *Name) {
       R.mode = attrInt(AttentionOp, A, Name);
       if (R.mode < 0 || R.mode > 3)
         fail("{}: attribute '{}' must be 0, 1, 2 or 3, got {}", AttentionOp,
              Name, R.mode);
     }},
    {"softmax_dtype",
     [](AttentionAttrs &R, const Attrs &A, const char *Name) {
       R.softmaxDType = attrDType(AttentionOp, A, Name);
       if (R.softmaxDType && !attentionDType(*R.softmaxDType))
         fail("{}: attribute '{}' must be bfloat16, float16, float32 or "
              "float64, got {}",
              AttentionOp, Name, dtypeName(*R.softmaxDType));
     }},
    {"scale",
     [](AttentionAttrs &R, const Attrs &A, const char *Name) {
       OpAttrs OA(AttentionOp, A);
       R.scale = OA.has(Name) ? std::optional<double>(OA.getFloat(Name))
                              : std::nullopt;
     }},
    {"softcap", [](AttentionAttrs &R, const Attrs &A, const char *Name) {
       R.softcap = attrFloat(AttentionOp, A, Name);
     }}};

AttentionAttrs readAttrs(const Attrs &A) {
  static const AttentionAttrs Defaults = [] {
    AttentionAttrs R;
    for (const AttrReader &Rd : AttrReaders)
      Rd.read(R, Attrs(), Rd.name);
    return R;
  }();
  AttentionAttrs R = Defaults;
  for (const auto &Item : A.items())
    for (const AttrReader &Rd : AttrReaders)
      if (Item.first == Rd.name) {
        Rd.read(R, A, Rd.name);
        break;
      }
  return R;
}

/// Checks the inputs as the type relation does (src/ir/ops/Attention.cc),
/// on known extents.
Geometry geometry(const std::vector<Tensor> &In, const AttentionAttrs &AA) {
  Geometry G;
  size_t Count = 3;
  std::vector<const char *> Names = {"q", "k", "v"};
  auto Add = [&](int64_t &Index, const char *Name) {
    Index = (int64_t)Count++;
    Names.push_back(Name);
  };
  if (AA.hasMask)
    Add(G.mask, "attn_mask");
  if (AA.hasPast) {
    Add(G.pastKey, "past_key");
    Add(G.pastValue, "past_value");
  }
  if (AA.hasNonpad)
    Add(G.nonpad, "nonpad_kv_seqlen");
  if (In.size() != Count)
    fail("{}: expected {} inputs as the has_* attributes say, got {}",
         AttentionOp, Count, In.size());
  G.withPresent = AA.withPresent;
  G.withQk = AA.withQk;

  for (size_t I = 0; I < Count; ++I)
    if ((int64_t)I != G.mask && (int64_t)I != G.nonpad &&
        !attentionDType(In[I].dtype()))
      fail("{}: input '{}' must be bfloat16, float16, float32 or float64, "
           "got {}",
           AttentionOp, Names[I], dtypeName(In[I].dtype()));
  checkSameDType(AttentionOp, "q", In[0], "k", In[1]);
  const Tensor &Q = In[0], &K = In[1], &V = In[2];
  auto Dims = [&](size_t I) { return shapeToString(In[I].shape()); };
  int64_t Rank = Q.rank();
  if ((Rank != 3 && Rank != 4) || K.rank() != Rank || V.rank() != Rank)
    fail("{}: q, k and v must all have rank 3 or all rank 4, got {}, {} and {}",
         AttentionOp, Dims(0), Dims(1), Dims(2));
  const std::optional<int64_t> &QHeads = AA.qHeads, &KvHeads = AA.kvHeads;
  G.seqFirst = AA.seqFirst;
  if (G.seqFirst && (Rank != 3 || G.pastKey >= 0 || G.withPresent || G.withQk))
    fail("{}: seq_first takes 3-D q, k and v without a KV cache or scores",
         AttentionOp);
  // Axes of a 3-D input: batch, sequence, hidden.
  const size_t BA = G.seqFirst ? 1 : 0, SA = G.seqFirst ? 0 : 1;
  G.batch = Q.shape()[BA];
  if (K.shape()[BA] != G.batch || V.shape()[BA] != G.batch)
    fail("{}: q {}, k {} and v {} differ in batch size", AttentionOp, Dims(0),
         Dims(1), Dims(2));
  if (Rank == 4) {
    G.qHeads = Q.shape()[1];
    G.kvHeads = K.shape()[1];
    G.seqQ = Q.shape()[2];
    G.seqKv = K.shape()[2];
    G.headK = Q.shape()[3];
    G.headV = V.shape()[3];
    if (V.shape()[1] != G.kvHeads || V.shape()[2] != G.seqKv)
      fail("{}: k {} and v {} differ in heads or sequence length", AttentionOp,
           Dims(1), Dims(2));
    if (K.shape()[3] != G.headK)
      fail("{}: q {} and k {} differ in head size", AttentionOp, Dims(0),
           Dims(1));
    if ((QHeads && *QHeads != G.qHeads) || (KvHeads && *KvHeads != G.kvHeads))
      fail("{}: q_num_heads/kv_num_heads disagree with q {} and k {}",
           AttentionOp, Dims(0), Dims(1));
  } else {
    if (!QHeads || !KvHeads)
      fail("{}: 3-D q, k and v need attributes q_num_heads and kv_num_heads",
           AttentionOp);
    G.threeD = true;
    G.qHeads = *QHeads;
    G.kvHeads = *KvHeads;
    G.seqQ = Q.shape()[SA];
    G.seqKv = K.shape()[SA];
    if (V.shape()[SA] != G.seqKv)
      fail("{}: k {} and v {} differ in sequence length", AttentionOp, Dims(1),
           Dims(2));
    if (Q.shape()[2] % G.qHeads != 0 || V.shape()[2] % G.kvHeads != 0)
      fail("{}: the hidden sizes of q {} and v {} are not multiples of "
           "q_num_heads {} and kv_num_heads {}",
           AttentionOp, Dims(0), Dims(2), G.qHeads, G.kvHeads);
    G.headK = Q.shape()[2] / G.qHeads;
    G.headV = V.shape()[2] / G.kvHeads;
    if (K.shape()[2] != G.kvHeads * G.headK)
      fail("{}: k {} must have hidden size kv_num_heads * head size = {}",
           AttentionOp, Dims(1), G.kvHeads * G.headK);
  }
  if (G.qHeads % G.kvHeads != 0)
    fail("{}: the {} q heads are not a multiple of the {} kv heads",
         AttentionOp, G.qHeads, G.kvHeads);

  G.total = G.seqKv;
  if (G.pastKey >= 0) {
    const Tensor &PK = In[(size_t)G.pastKey], &PV = In[(size_t)G.pastValue];
    checkSameDType(AttentionOp, "q", Q, "past_key", PK);
    checkSameDType(AttentionOp, "v", V, "past_value", PV);
    G.past = PK.rank() == 4 ? PK.shape()[2] : -1;
    if (PK.shape() != Shape{G.batch, G.kvHeads, G.past, G.headK} ||
        PV.shape() != Shape{G.batch, G.kvHeads, G.past, G.headV})
      fail("{}: past_key {} and past_value {} must be (batch {}, kv heads {}, "
           "past length, head size {} / {})",
           AttentionOp, Dims((size_t)G.pastKey), Dims((size_t)G.pastValue),
           G.batch, G.kvHeads, G.headK, G.headV);
    G.total += G.past;
  }
  if (G.mask >= 0) {
    const Tensor &M = In[(size_t)G.mask];
    DType MT = M.dtype();
    if (MT != DType::Bool && !attentionDType(MT) && !isInteger(MT))
      fail("{}: input 'attn_mask' must be bool, an integer or a float dtype, "
           "got {}",
           AttentionOp, dtypeName(MT));
    int64_t MR = M.rank();
    Shape Lead = {G.batch, G.qHeads, G.seqQ};
    bool Ok = MR >= 1 && MR <= 4 && M.shape().back() <= G.total;
    for (int64_t D = 0; Ok && D + 1 < MR; ++D) {
      int64_t E = M.shape()[(size_t)(MR - 2 - D)];
      Ok = E == 1 || E == Lead[(size_t)(2 - D)];
    }
    if (!Ok)
      fail("{}: attn_mask {} does not broadcast to (batch, q heads, q seq, "
           "keys) = {} (the last axis may be shorter)",
           AttentionOp, Dims((size_t)G.mask),
           shapeToString({G.batch, G.qHeads, G.seqQ, G.total}));
  }
  if (G.nonpad >= 0) {
    const Tensor &N = In[(size_t)G.nonpad];
    if (N.dtype() != DType::Int64 || N.shape() != Shape{G.batch})
      fail("{}: nonpad_kv_seqlen must be int64 of shape ({},), got {} {}",
           AttentionOp, G.batch, dtypeName(N.dtype()), Dims((size_t)G.nonpad));
  }
  return G;
}

std::vector<TensorMeta> attentionShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  Geometry G = geometry(In, readAttrs(A));
  DType QT = In[0].dtype();
  std::vector<TensorMeta> Out;
  if (G.seqFirst)
    Out.push_back({{G.seqQ, G.batch, G.qHeads * G.headV}, QT});
  else if (G.threeD)
    Out.push_back({{G.batch, G.seqQ, G.qHeads * G.headV}, QT});
  else
    Out.push_back({{G.batch, G.qHeads, G.seqQ, G.headV}, QT});
  if (G.withPresent) {
    Out.push_back({{G.batch, G.kvHeads, G.total, G.headK}, QT});
    Out.push_back({{G.batch, G.kvHeads, G.total, G.headV}, In[2].dtype()});
  }
  if (G.withQk)
    Out.push_back({{G.batch, G.qHeads, G.seqQ, G.total}, QT});
  return Out;
}

//===----------------------------------------------------------------------===//
// Rows in and out
//===----------------------------------------------------------------------===//

/// Reads N elements of a float dtype as C.
template <typename C>
void loadRow(const void *Src, DType T, C *Dst, int64_t N) {
  switch (T) {
  case DType::Float32:
  case DType::Float64:
    if (T == dtypeOf<C>()) {
      std::memcpy(Dst, Src, (size_t)N * sizeof(C));
    } else if (T == DType::Float32) {
      const float *S = static_cast<const float *>(Src);
      for (int64_t I = 0; I < N; ++I)
        Dst[I] = (C)S[I];
    } else {
      const double *S = static_cast<const double *>(Src);
      for (int64_t I = 0; I < N; ++I)
        Dst[I] = (C)S[I];
    }
    break;
  case DType::Float16: {
    const Half *S = static_cast<const Half *>(Src);
    for (int64_t I = 0; I < N; ++I)
      Dst[I] = (C)(float)S[I];
    break;
  }
  default: { // BFloat16 (validated)
    const BFloat16 *S = static_cast<const BFloat16 *>(Src);
    for (int64_t I = 0; I < N; ++I)
      Dst[I] = (C)(float)S[I];
    break;
  }
  }
}

/// Writes N values of C as a float dtype.
template <typename C>
void storeRow(const C *Src, void *Dst, DType T, int64_t N) {
  if (T == dtypeOf<C>()) {
    std::memcpy(Dst, Src, (size_t)N * sizeof(C));
    return;
  }
  switch (T) {
  case DType::Float32: {
    float *D = static_cast<float *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = (float)Src[I];
    break;
  }
  case DType::Float64: {
    double *D = static_cast<double *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = (double)Src[I];
    break;
  }
  case DType::Float16: {
    Half *D = static_cast<Half *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = Half((float)Src[I]);
    break;
  }
  default: {
    BFloat16 *D = static_cast<BFloat16 *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = BFloat16((float)Src[I]);
    break;
  }
  }
}

/// A tensor read or written row by row.
struct Rows {
  char *data = nullptr;
  DType dtype = DType::Float32;
  RowLayout layout;
  size_t elementSize = 4;
  void *at(int64_t B, int64_t H, int64_t S) const {
    return data + (size_t)layout.at(B, H, S) * elementSize;
  }
};

Rows rowsOf(const Tensor &T, RowLayout L) {
  return {static_cast<char *>(T.rawData()), T.dtype(), L, dtypeSize(T.dtype())};
}

//===----------------------------------------------------------------------===//
// The fused loop
//===----------------------------------------------------------------------===//

/// present_key or present_value: concat(past, new) along the sequence.
struct CacheCopy {
  Rows past, fresh, present; // present: [B, H, T, D]
  int64_t pastLen = 0, headSize = 0;

  /// Copies keys [K0, K1) of (b, h) into present: contiguous runs at once.
  void copy(int64_t B, int64_t H, int64_t K0, int64_t K1) const {
    size_t RowBytes = (size_t)headSize * present.elementSize;
    if (K0 < pastLen) {
      int64_t End = std::min(K1, pastLen);
      std::memcpy(present.at(B, H, K0), past.at(B, H, K0),
                  (size_t)(End - K0) * RowBytes);
      K0 = End;
    }
    if (K0 >= K1)
      return;
    if (fresh.layout.seq == headSize) {
      std::memcpy(present.at(B, H, K0), fresh.at(B, H, K0 - pastLen),
                  (size_t)(K1 - K0) * RowBytes);
      return;
    }
    for (int64_t K = K0; K < K1; ++K)
      std::memcpy(present.at(B, H, K), fresh.at(B, H, K - pastLen), RowBytes);
  }
};

/// The products below take 64 bytes of columns at a time (two AVX2 vectors,
/// one AVX-512 vector); head sizes are padded to it.
template <typename C> constexpr int64_t kPair = 64 / sizeof(C);

/// Everything a task reads; shared by all tasks of a call.
template <typename C> struct Job {
  Geometry g;
  Rows q, k, v, pastKey, pastValue, y, qk;
  /// Keys [0, cached) are read from pastKey/pastValue, the others from k/v
  /// (the present outputs, when written, hold them all).
  int64_t cached = 0;
  /// Where present_key/present_value come from (with_present).
  CacheCopy keyCopy, valueCopy;
  /// Each task writes the present rows of its kv head as it reads them:
  /// one task per kv head (a decoding step), so the cache is read once.
  bool copiesPresent = false;
  const C *bias = nullptr; // the mask as additive values, or null
  int64_t maskCols = 0;    // its last extent
  RowLayout biasLayout;    // (batch, q head, q row) strides, 0: broadcast
  const int64_t *nonpad = nullptr;
  C scale = 1, softcap = 0;
  bool causal = false;
  /// Keys past a row's end (causal, padding, a short mask) may be skipped:
  /// not when softcap turns their -inf into -softcap, nor when the scores
  /// are returned.
  bool skipsMasked = true;
  /// Values of the compute type whose head size is a multiple of kPair are
  /// read where they are, not packed.
  bool valuesInPlace = false;
  /// Query rows in the lanes of vectors (attendTaskRowsInLanes, AVX-512):
  /// float32 q, k and v of heads of 8 or 16, no mask, softcap, returned
  /// scores or present outputs.
  bool rowsInLanes = false;
  int64_t mode = 0;
  int64_t group = 1;       // q heads per kv head
  int64_t rowsPerTask = 1; // query rows of one q head in a task
  int64_t queryBlocks = 1; // tasks per (batch, kv head)
  int64_t headVPad = 0;    // headV rounded up to kPair
};

// The tasks' loops (AttentionTasks.inc), compiled for AVX-512 (64-byte
// vectors), AVX2 + FMA and the baseline (32 bytes), one namespace each;
// hostIsa() picks. (Not target_clones: vectors wider than the baseline's
// must be declared in code compiled for their target.)
namespace attn_base {
#define RIVET_ATTN_VECTOR_BYTES 32
#include "kernels/ops/AttentionTasks.inc"
#undef RIVET_ATTN_VECTOR_BYTES
} // namespace attn_base

#if defined(__x86_64__)
RIVET_BEGIN_TARGET_AVX2
namespace attn_avx2 {
#define RIVET_ATTN_VECTOR_BYTES 32
#include "kernels/ops/AttentionTasks.inc"
#undef RIVET_ATTN_VECTOR_BYTES
} // namespace attn_avx2
RIVET_END_TARGET
RIVET_BEGIN_TARGET_AVX512
namespace attn_avx512 {
#define RIVET_ATTN_VECTOR_BYTES 64
#include "kernels/ops/AttentionTasks.inc"
#undef RIVET_ATTN_VECTOR_BYTES
} // namespace attn_avx512
RIVET_END_TARGET
#endif

/// The parallel loop's body for compute type C on this CPU.
template <typename C> RivetParallelBody tasksBody() {
  constexpr bool F = std::is_same_v<C, float>;
#if defined(__x86_64__)
  switch (cpu::hostIsa()) {
  case cpu::CpuIsa::Avx512:
    return F ? attn_avx512::attendTasksFloat : attn_avx512::attendTasksDouble;
  case cpu::CpuIsa::Avx2:
    return F ? attn_avx2::attendTasksFloat : attn_avx2::attendTasksDouble;
  case cpu::CpuIsa::Base: break;
  }
#endif
  return F ? attn_base::attendTasksFloat : attn_base::attendTasksDouble;
}

/// Writes present_key and present_value whole, the (batch, kv head) pairs
/// in parallel (a KV cache is the bulk of a decoding step's memory traffic).
template <typename C> void writePresent(Job<C> &J) {
  RivetParallelBody Body = [](void *Closure, int64_t Begin, int64_t End) {
    const Job<C> &J = *static_cast<const Job<C> *>(Closure);
    for (int64_t BH = Begin; BH < End; ++BH) {
      int64_t B = BH / J.g.kvHeads, H = BH % J.g.kvHeads;
      J.keyCopy.copy(B, H, 0, J.g.total);
      J.valueCopy.copy(B, H, 0, J.g.total);
    }
  };
  kernelRuntime().parallelFor(J.g.batch * J.g.kvHeads, 1, &J, Body);
}

template <typename C>
void attendAll(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const AttentionAttrs &AA, const Geometry &G) {
  Job<C> J;
  J.g = G;
  const Tensor &Q = In[0], &K = In[1], &V = In[2];
  auto Layout = [&](int64_t Heads, int64_t Seq, int64_t Head) {
    return G.seqFirst ? RowLayout::of3dSeqFirst(G.batch, Heads, Head)
           : G.threeD ? RowLayout::of3d(Heads, Seq, Head)
                      : RowLayout::of4d(Heads, Seq, Head);
  };
  J.q = rowsOf(Q, Layout(G.qHeads, G.seqQ, G.headK));
  J.k = rowsOf(K, Layout(G.kvHeads, G.seqKv, G.headK));
  J.v = rowsOf(V, Layout(G.kvHeads, G.seqKv, G.headV));
  J.y = rowsOf(Out[0], Layout(G.qHeads, G.seqQ, G.headV));
  if (G.pastKey >= 0) {
    J.cached = G.past;
    J.pastKey = rowsOf(In[(size_t)G.pastKey],
                       RowLayout::of4d(G.kvHeads, G.past, G.headK));
    J.pastValue = rowsOf(In[(size_t)G.pastValue],
                         RowLayout::of4d(G.kvHeads, G.past, G.headV));
  }
  if (G.withPresent) {
    Rows PresentK =
        rowsOf(Out[1], RowLayout::of4d(G.kvHeads, G.total, G.headK));
    Rows PresentV =
        rowsOf(Out[2], RowLayout::of4d(G.kvHeads, G.total, G.headV));
    J.keyCopy = {J.pastKey, J.k, PresentK, G.past, G.headK};
    J.valueCopy = {J.pastValue, J.v, PresentV, G.past, G.headV};
    // The keys and values are read from the present outputs: just written
    // (by the task itself, or all at once before the tasks start), likely
    // still in cache.
    J.k = PresentK;
    J.v = PresentV;
    J.cached = 0;
  }
  if (G.withQk)
    J.qk = rowsOf(Out.back(), RowLayout::of4d(G.qHeads, G.seqQ, G.total));

  // The mask as additive values of C: bool true is 0, false -inf.
  std::vector<C> Bias;
  if (G.mask >= 0) {
    const Tensor &M = In[(size_t)G.mask];
    if (M.dtype() == dtypeOf<C>()) {
      J.bias = M.data<C>();
    } else if (M.dtype() == DType::Bool) {
      const bool *P = M.data<bool>();
      Bias.resize((size_t)M.numel());
      for (size_t I = 0; I < Bias.size(); ++I)
        Bias[I] = P[I] ? C(0) : -std::numeric_limits<C>::infinity();
      J.bias = Bias.data();
    } else {
      Bias.resize((size_t)M.numel());
      convertBuffer(M.rawData(), M.dtype(), Bias.data(), dtypeOf<C>(),
                    M.numel());
      J.bias = Bias.data();
    }
    J.maskCols = M.shape().back();
    // Strides of the mask's axes aligned to (batch, q head, q row); 0 where
    // it broadcasts.
    std::vector<int64_t> St = contiguousStrides(M.shape());
    int64_t Lead[3] = {0, 0, 0};
    int64_t MR = M.rank();
    for (int64_t D = 0; D + 1 < MR; ++D) {
      size_t Axis = (size_t)(MR - 2 - D);
      if (M.shape()[Axis] != 1)
        Lead[2 - D] = St[Axis];
    }
    J.biasLayout = {Lead[0], Lead[1], Lead[2]};
  }
  if (G.nonpad >= 0)
    J.nonpad = In[(size_t)G.nonpad].data<int64_t>();

  J.scale = (C)AA.scale.value_or(1.0 / std::sqrt((double)G.headK));
  J.softcap = (C)AA.softcap;
  J.causal = AA.causal;
  J.skipsMasked = !(J.softcap > 0) && !G.withQk;
  J.mode = AA.mode;
  J.group = G.qHeads / G.kvHeads;
  // Fewer rows per task where there would be too few tasks for the threads
  // (some in reserve for the uneven work of causal rows).
  J.rowsPerTask = std::min(std::max<int64_t>(1, kTaskRows / J.group), G.seqQ);
  auto TasksOf = [&](int64_t Rows) {
    return G.batch * G.kvHeads * ((G.seqQ + Rows - 1) / Rows);
  };
  while (J.rowsPerTask > 1 && TasksOf(J.rowsPerTask) < 4 * numThreads())
    J.rowsPerTask = (J.rowsPerTask + 1) / 2;
  J.queryBlocks =
      J.rowsPerTask ? (G.seqQ + J.rowsPerTask - 1) / J.rowsPerTask : 0;
  J.headVPad = (G.headV + kPair<C> - 1) / kPair<C> * kPair<C>;
  J.valuesInPlace = V.dtype() == dtypeOf<C>() && G.headV == J.headVPad;
  J.rowsInLanes = std::is_same_v<C, float> && Q.dtype() == DType::Float32 &&
                  K.dtype() == DType::Float32 && V.dtype() == DType::Float32 &&
                  G.headK == G.headV && (G.headK == 8 || G.headK == 16) &&
                  !J.bias && !(J.softcap > 0) && !G.withQk && !G.withPresent;

  J.copiesPresent = G.withPresent && J.queryBlocks == 1;
  if (G.withPresent && !J.copiesPresent)
    writePresent(J);

  int64_t Tasks = G.batch * G.kvHeads * J.queryBlocks;
  kernelRuntime().parallelFor(Tasks, 1, &J, tasksBody<C>());
}

void attentionKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  AttentionAttrs AA = readAttrs(A);
  Geometry G = geometry(In, AA);
  bool Wide = In[0].dtype() == DType::Float64 ||
              In[2].dtype() == DType::Float64 ||
              AA.softmaxDType == DType::Float64;
  if (Wide)
    attendAll<double>(In, Out, AA, G);
  else
    attendAll<float>(In, Out, AA, G);
}

} // namespace

RIVET_REGISTER_KERNEL("attention", attentionKernel, attentionShape, false);

RIVET_REGISTER_ATTRS(
    "attention",
    {{"scale", AttrKind::Float, false,
      "multiplies q k^T (default 1/sqrt(head size))"},
     {"is_causal", AttrKind::Int, false,
      "1: query i sees keys up to past length + i", 0},
     {"q_num_heads", AttrKind::Int, false, "q heads of 3-D inputs"},
     {"kv_num_heads", AttrKind::Int, false, "k and v heads of 3-D inputs"},
     {"softcap", AttrKind::Float, false,
      "> 0: scores become softcap * tanh(scores / softcap)", 0.0},
     {"softmax_dtype", AttrKind::String, false,
      "dtype of the softmax (float64 sums in double; default the inputs')"},
     {"qk_matmul_output_mode", AttrKind::Int, false,
      "the scores returned: 0 q k^T, 1 plus mask, 2 after softcap, 3 after "
      "softmax",
      0},
     {"has_attn_mask", AttrKind::Int, false, "1: an attn_mask argument", 0},
     {"has_past", AttrKind::Int, false, "1: past_key and past_value arguments",
      0},
     {"has_nonpad_kv_seqlen", AttrKind::Int, false,
      "1: a nonpad_kv_seqlen argument", 0},
     {"with_present", AttrKind::Int, false,
      "1: also return present_key, present_value", 0},
     {"with_qk", AttrKind::Int, false, "1: also return the scores", 0},
     {"seq_first", AttrKind::Int, false,
      "1: 3-D q, k, v and y are [seq, batch, hidden] (torch's "
      "MultiheadAttention layout; FuseAttention), without a KV cache or "
      "scores",
      0}});

} // namespace rivet::kernels
