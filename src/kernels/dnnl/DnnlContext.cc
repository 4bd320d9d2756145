//===- DnnlContext.cc - Engine, streams and caches for the anchors --------===//
#include "kernels/dnnl/DnnlContext.h"

#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"
#include "kernels/dnnl/DnnlAnchors.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

// Debian's oneDNN runs on OpenMP; its thread count is the calling thread's
// OpenMP setting. Weak, so that this file needs no OpenMP flags (only
// Threading.cc is built with them, and only by GCC; oneDNN brings libgomp).
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace rivet::dnnlctx {
namespace {

std::atomic<int64_t> PrimitivesCreated{0}, PrimitiveHits{0};
std::atomic<int64_t> WeightReorders{0}, WeightHits{0};

struct PrimitiveCache {
  std::mutex Lock;
  std::unordered_map<PrimitiveKey, std::shared_ptr<const CachedPrimitive>,
                     PrimitiveKeyHash>
      Map;
};
PrimitiveCache &primitiveCache() {
  static PrimitiveCache C;
  return C;
}

struct WeightEntry {
  std::weak_ptr<Storage> owner;
  dnnl::memory reordered;
};
struct WeightCache {
  std::mutex Lock;
  std::unordered_map<PrimitiveKey, WeightEntry, PrimitiveKeyHash> Map;
};
WeightCache &weightCache() {
  static WeightCache C;
  return C;
}

/// Tags of the post-op entries of a PrimitiveKey.
enum PostOpTag : int64_t { Relu = 1, Clip, Sigmoid, Tanh, Sum, Add, Mul };

/// Kind tags, the first word of a PrimitiveKey (matmul has its own).
constexpr int64_t kReorderTag = 0x72656f72646572; // "reorder"

} // namespace

void PrimitiveKey::addFloat(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, sizeof(Bits));
  add(Bits);
}

void PrimitiveKey::addList(const int64_t *Values, size_t N) {
  add((int64_t)N);
  words.insert(words.end(), Values, Values + N);
}

void PrimitiveKey::addDesc(const dnnl::memory::desc &D) {
  // As they are: formatting them (one fmt call per byte) cost more than the
  // reorders they keyed on small tensors.
  constexpr size_t N = (sizeof(D.data) + sizeof(int64_t) - 1) / sizeof(int64_t);
  int64_t Words[N] = {};
  std::memcpy(Words, &D.data, sizeof(D.data));
  words.insert(words.end(), Words, Words + N);
}

size_t PrimitiveKeyHash::operator()(const PrimitiveKey &K) const {
  // Each word mixed in with splitmix64's finalizer.
  uint64_t H = K.words.size();
  for (int64_t W : K.words) {
    uint64_t X = H ^ (uint64_t)W;
    X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ULL;
    X = (X ^ (X >> 27)) * 0x94d049bb133111ebULL;
    H = X ^ (X >> 31);
  }
  return (size_t)H;
}

bool isPerChannelBlocked(const Tensor &T, int64_t M, const Shape &Out) {
  if (T.numel() != M || T.rank() > (int64_t)Out.size())
    return false;
  size_t Pad = Out.size() - (size_t)T.rank();
  for (size_t I = 0; I < (size_t)T.rank(); ++I)
    if (T.shape()[I] != 1 && I + Pad != 1 && I + Pad != Out.size() - 1)
      return false;
  return true;
}

dnnl::engine &engine() {
  static dnnl::engine E(dnnl::engine::kind::cpu, 0);
  return E;
}

/// Applies numThreads() to this thread's OpenMP setting when it changed.
/// oneDNN reads it both when it creates a primitive (which then keeps its
/// thread count: a primitive created with 2 threads opens a 2-thread region
/// on every call) and when it executes one.
static thread_local bool SingleThreaded = false; // inside a small WorkScope

static int effectiveThreads() { return SingleThreaded ? 1 : numThreads(); }

/// Sets this thread's OpenMP thread count, remembering it (a call costs
/// more than the comparison that skips it).
static void setOmpThreads(int N) {
  thread_local int Applied = 0;
  if (Applied != N && omp_set_num_threads) {
    omp_set_num_threads(N);
    Applied = N;
  }
}

static void applyThreadSetting() { setOmpThreads(effectiveThreads()); }

/// Multiply-adds below which a second thread costs more than it saves
/// (~150 us of work at one core's speed): an OpenMP region whose idle
/// threads sleep (OMP_WAIT_POLICY=passive) costs 18-50 us to wake and join
/// on a shared VM when the worker slept briefly, and averaged 230 us for
/// mobilenet_v2's classifier (1.3M multiply-adds, ~45 us on one thread),
/// whose worker had slept through the whole model; a few us on bare metal.
constexpr int64_t kMinParallelWork = 1 << 22;

WorkScope::WorkScope(int64_t Work) : WorkScope(Work, kMinParallelWork) {}

WorkScope::WorkScope(int64_t Work, int64_t MinParallelWork) {
  // Inside a limited scope (a reorder within a conv call) a nested one
  // changes nothing, so that its end does not lift the outer limit.
  if (SingleThreaded || Work >= MinParallelWork || numThreads() == 1 ||
      !omp_set_num_threads)
    return;
  SingleThreaded = Limited = true;
  setOmpThreads(1);
}

WorkScope::~WorkScope() {
  if (!Limited)
    return;
  SingleThreaded = false;
  setOmpThreads(numThreads());
}

dnnl::stream &threadStream() {
  thread_local dnnl::stream S(engine());
  applyThreadSetting();
  return S;
}

dnnl::memory::dims toDims(const Shape &S) {
  return dnnl::memory::dims(S.begin(), S.end());
}

dnnl::memory::desc plainDesc(const dnnl::memory::dims &D) {
  dnnl::memory::dims Strides(D.size(), 1);
  for (size_t I = D.size(); I-- > 1;)
    Strides[I - 1] = Strides[I] * std::max<int64_t>(D[I], 1);
  return stridedDesc(D, Strides);
}

dnnl::memory::desc stridedDesc(const dnnl::memory::dims &D,
                               const dnnl::memory::dims &Strides) {
  return dnnl::memory::desc(D, dnnl::memory::data_type::f32, Strides);
}

dnnl::memory wrap(const Tensor &T, const dnnl::memory::desc &D) {
  return dnnl::memory(D, engine(), T.rawData());
}

std::optional<PostOpPlan> planPostOps(const PostOps &P, const Shape &Out,
                                      const dnnl::memory::dims &DstDims,
                                      const std::vector<int> &OutToDst,
                                      bool AllowSum,
                                      const dnnl::memory::desc *BlockedDst) {
  using dnnl::algorithm;
  PostOpPlan Plan;
  for (const PostOp &Op : P) {
    switch (Op.kind) {
    case PostOp::Kind::Relu:
      Plan.ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
      Plan.key.add(PostOpTag::Relu);
      break;
    case PostOp::Kind::Clip:
      Plan.ops.append_eltwise(1.f, algorithm::eltwise_clip, (float)Op.lo,
                              (float)Op.hi);
      Plan.key.add(PostOpTag::Clip);
      Plan.key.addFloat((float)Op.lo);
      Plan.key.addFloat((float)Op.hi);
      break;
    case PostOp::Kind::Sigmoid:
      Plan.ops.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
      Plan.key.add(PostOpTag::Sigmoid);
      break;
    case PostOp::Kind::Tanh:
      Plan.ops.append_eltwise(1.f, algorithm::eltwise_tanh, 0.f, 0.f);
      Plan.key.add(PostOpTag::Tanh);
      break;
    case PostOp::Kind::Add:
    case PostOp::Kind::Multiply: {
      const Tensor &T = Op.operand;
      if (!allFloat32({&T}) || T.rank() > (int64_t)Out.size())
        return std::nullopt;
      if (AllowSum && Op.kind == PostOp::Kind::Add && !Plan.sumOperand &&
          T.shape() == Out) {
        Plan.ops.append_sum(1.f);
        Plan.sumOperand = T;
        Plan.key.add(PostOpTag::Sum);
        break;
      }
      // Right-align the operand with Out, then fold each output axis into
      // its oneDNN axis: within one oneDNN axis the operand must be all 1s
      // (broadcast) or all full extents.
      dnnl::memory::dims D(DstDims.size(), 1);
      std::vector<int> State(DstDims.size(), 0); // 0 unset, 1 bcast, 2 full
      size_t Pad = Out.size() - (size_t)T.rank();
      for (size_t I = 0; I < Out.size(); ++I) {
        int64_t E = I < Pad ? 1 : T.shape()[I - Pad];
        if (E != 1 && E != Out[I])
          return std::nullopt;
        if (Out[I] == 1)
          continue; // extent-1 axes fit either way
        int Want = E == 1 ? 1 : 2, &S = State[(size_t)OutToDst[I]];
        if (S != 0 && S != Want)
          return std::nullopt;
        S = Want;
      }
      for (size_t I = 0; I < D.size(); ++I)
        D[I] = State[I] == 2 ? DstDims[I] : 1;
      dnnl::memory::desc MD = plainDesc(D);
      bool ReadBlocked = false;
      if (BlockedDst) {
        // Blocked bytes follow the plain order unless the channels and a
        // spatial axis are both full.
        bool Spatial = false;
        for (size_t I = 2; I < D.size(); ++I)
          Spatial |= State[I] == 2;
        if (State[1] == 2 && Spatial) {
          if (D != DstDims)
            return std::nullopt;
          MD = *BlockedDst;
          ReadBlocked = true;
        }
      }
      bool Add = Op.kind == PostOp::Kind::Add;
      Plan.ops.append_binary(
          Add ? algorithm::binary_add : algorithm::binary_mul, MD);
      Plan.operandDescs.push_back(MD);
      Plan.operands.push_back(T);
      Plan.key.add(Add ? PostOpTag::Add : PostOpTag::Mul);
      Plan.key.addList(D.data(), D.size());
      Plan.key.add(ReadBlocked);
      break;
    }
    }
  }
  return Plan;
}

void addPostOpArgs(const PostOpPlan &Plan, std::vector<dnnl_exec_arg_t> &Args,
                   std::vector<dnnl::memory> &Keep) {
  size_t Bin = 0;
  for (int I = 0; I < Plan.ops.len(); ++I) {
    if (Plan.ops.kind(I) != dnnl::primitive::kind::binary)
      continue;
    Keep.push_back(wrap(Plan.operands[Bin], Plan.operandDescs[Bin]));
    Args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(I) | DNNL_ARG_SRC_1,
                    Keep.back().get()});
    ++Bin;
  }
}

ThreadMemories &
threadMemories(const std::shared_ptr<const CachedPrimitive> &P) {
  thread_local std::unordered_map<const CachedPrimitive *, ThreadMemories> M;
  auto [It, New] = M.try_emplace(P.get());
  ThreadMemories &T = It->second;
  T.fresh = New;
  if (New) {
    T.owner = P;
    T.src = dnnl::memory(P->src, engine(), DNNL_MEMORY_NONE);
    T.weights = dnnl::memory(P->weights, engine(), DNNL_MEMORY_NONE);
    T.dst = dnnl::memory(P->dst, engine(), DNNL_MEMORY_NONE);
    if (P->bias.get_size())
      T.bias = dnnl::memory(P->bias, engine(), DNNL_MEMORY_NONE);
  }
  return T;
}

/// Runs Create (outside the cache's lock: JIT compilation can take
/// milliseconds); oneDNN having no implementation gives a null prim.
static std::shared_ptr<const CachedPrimitive>
createPrimitive(const std::function<CachedPrimitive()> &Create) {
  auto P = std::make_shared<CachedPrimitive>();
  try {
    *P = Create();
  } catch (const dnnl::error &) {
    P->prim.reset(); // no implementation for this case
  }
  ++PrimitivesCreated;
  return P;
}

std::shared_ptr<const CachedPrimitive> lookupPrimitive(PrimitiveKey &Key) {
  applyThreadSetting();
  Key.add(effectiveThreads());
  PrimitiveCache &C = primitiveCache();
  std::lock_guard<std::mutex> G(C.Lock);
  auto It = C.Map.find(Key);
  if (It == C.Map.end())
    return nullptr;
  ++PrimitiveHits;
  return It->second;
}

std::shared_ptr<const CachedPrimitive>
insertPrimitive(const PrimitiveKey &Key,
                const std::function<CachedPrimitive()> &Create) {
  std::shared_ptr<const CachedPrimitive> P = createPrimitive(Create);
  PrimitiveCache &C = primitiveCache();
  std::lock_guard<std::mutex> G(C.Lock);
  return C.Map.emplace(Key, std::move(P)).first->second;
}

dnnl::primitive_attr baseAttr() {
  dnnl::primitive_attr A;
  A.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return A;
}

/// This thread's scratchpad memory for P, or none when P needs none.
static std::optional<dnnl::memory> scratchpadOf(const CachedPrimitive &P) {
  size_t Bytes = P.scratchpad.get_size();
  if (!Bytes)
    return std::nullopt;
  thread_local std::unique_ptr<char[]> Scratch;
  thread_local size_t Capacity = 0;
  if (Capacity < Bytes) {
    Scratch.reset(new char[Bytes + 64]);
    Capacity = Bytes;
  }
  void *Aligned = reinterpret_cast<void *>(
      (reinterpret_cast<uintptr_t>(Scratch.get()) + 63) & ~uintptr_t(63));
  return dnnl::memory(P.scratchpad, engine(), Aligned);
}

void executePrimitive(const CachedPrimitive &P,
                      std::unordered_map<int, dnnl::memory> Args) {
  if (std::optional<dnnl::memory> S = scratchpadOf(P))
    Args[DNNL_ARG_SCRATCHPAD] = *S;
  P.prim->execute(threadStream(), Args);
}

void executePrimitive(const CachedPrimitive &P,
                      std::vector<dnnl_exec_arg_t> &Args) {
  std::optional<dnnl::memory> S = scratchpadOf(P);
  if (S)
    Args.push_back({DNNL_ARG_SCRATCHPAD, S->get()});
  dnnl::error::wrap_c_api(dnnl_primitive_execute(P.prim->get(),
                                                 threadStream().get(),
                                                 (int)Args.size(), Args.data()),
                          "could not execute a primitive");
}

void reorderInto(const dnnl::memory &From, const dnnl::memory &To) {
  dnnl::memory::desc FD = From.get_desc(), TD = To.get_desc();
  // A copy is memory-bound: a second thread helps only for large tensors
  // (one below ~4 MB took ~13x longer on two threads than on one, waiting
  // for the second thread to wake).
  WorkScope Scope((int64_t)(FD.get_size() / 16));
  thread_local PrimitiveKey Key;
  Key.clear();
  Key.add(kReorderTag);
  Key.addDesc(FD);
  Key.addDesc(TD);
  auto Prim = findPrimitive(Key, [&] {
    CachedPrimitive C;
    dnnl::reorder::primitive_desc PD(engine(), FD, engine(), TD, baseAttr());
    C.prim = dnnl::reorder(PD);
    C.scratchpad = PD.scratchpad_desc();
    return C;
  });
  if (!Prim->prim)
    fail("oneDNN has no reorder between two float32 layouts");
  executePrimitive(*Prim, {{DNNL_ARG_FROM, From}, {DNNL_ARG_TO, To}});
}

dnnl::memory reorderTo(const dnnl::memory &From, const dnnl::memory::desc &To) {
  if (From.get_desc() == To)
    return From;
  dnnl::memory R(To, engine());
  reorderInto(From, R);
  return R;
}

dnnl::memory threadScratch(const dnnl::memory::desc &D, unsigned Slot) {
  struct Buffer {
    std::unique_ptr<char[]> Data;
    size_t Capacity = 0;
  };
  thread_local Buffer Buffers[4];
  if (Slot >= 4)
    fail("oneDNN scratch slot {} out of range", Slot);
  Buffer &B = Buffers[Slot];
  size_t Bytes = D.get_size();
  if (B.Capacity < Bytes) {
    B.Data.reset(new char[Bytes + 64]);
    B.Capacity = Bytes;
  }
  void *Aligned = reinterpret_cast<void *>(
      (reinterpret_cast<uintptr_t>(B.Data.get()) + 63) & ~uintptr_t(63));
  return dnnl::memory(D, engine(), Aligned);
}

dnnl::memory cachedWeightCopy(const Tensor &W, const PrimitiveKey &Form,
                              const std::function<dnnl::memory()> &Make) {
  PrimitiveKey Key;
  Key.add((int64_t) reinterpret_cast<uintptr_t>(W.storage().get()));
  Key.add(W.byteOffset());
  Key.addList(W.shape().data(), W.shape().size());
  Key.addList(Form.words.data(), Form.words.size());
  WeightCache &C = weightCache();
  {
    std::lock_guard<std::mutex> G(C.Lock);
    auto It = C.Map.find(Key);
    if (It != C.Map.end()) {
      if (It->second.owner.lock() == W.storage()) {
        ++WeightHits;
        return It->second.reordered;
      }
      C.Map.erase(It); // the buffer died; its address was reused
    }
  }
  dnnl::memory R = Make();
  ++WeightReorders;
  std::lock_guard<std::mutex> G(C.Lock);
  // Drop copies of buffers that died, so the cache does not outgrow the
  // live constants.
  for (auto It = C.Map.begin(); It != C.Map.end();)
    It = It->second.owner.expired() ? C.Map.erase(It) : std::next(It);
  C.Map[Key] = WeightEntry{W.storage(), R};
  return R;
}

dnnl::memory weightsIn(const Tensor &W, const dnnl::memory::desc &Plain,
                       const dnnl::memory::desc &Wanted, bool Constant) {
  dnnl::memory M = wrap(W, Plain);
  if (Plain == Wanted)
    return M;
  if (!Constant)
    return reorderTo(M, Wanted);
  PrimitiveKey Form;
  Form.add(kReorderTag);
  Form.addDesc(Wanted);
  return cachedWeightCopy(W, Form, [&] { return reorderTo(M, Wanted); });
}

} // namespace rivet::dnnlctx

namespace rivet {

DnnlCacheStats dnnlCacheStats() {
  using namespace dnnlctx;
  return {PrimitivesCreated.load(), PrimitiveHits.load(), WeightReorders.load(),
          WeightHits.load()};
}

void dnnlClearCaches() {
  using namespace dnnlctx;
  {
    std::lock_guard<std::mutex> G(primitiveCache().Lock);
    primitiveCache().Map.clear();
  }
  std::lock_guard<std::mutex> G(weightCache().Lock);
  weightCache().Map.clear();
}

} // namespace rivet
