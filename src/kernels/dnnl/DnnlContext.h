//===- DnnlContext.h - Engine, streams and caches for the anchors -*- C++ -*-=//
//
// Internal to src/kernels/dnnl (includes oneDNN). One CPU engine for the
// process and one stream per thread; primitives are cached by a key that
// spells out everything they were created for (shapes, geometry, post-ops,
// thread count), so a repeated call costs a hash lookup, not a JIT.
//
// Constant weights: a reordered copy is cached per weight buffer, keyed by
// the Storage's address, the tensor's offset, shape and the target layout.
// The entry keeps a weak_ptr to the Storage, so a buffer that died (and
// whose address may be reused) is never matched. Only callers that know the
// values are immutable while the Storage lives (constants of an executable)
// may use it: a recycled Storage rewritten in place would read stale values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"
#include "kernels/cpu/CpuSupport.h"
#include "kernels/dnnl/PostOps.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rivet::dnnlctx {

/// While alive, oneDNN primitives created and run on this thread use one
/// thread when Work (multiply-adds) is too little to pay for waking a
/// second one; otherwise numThreads(). Wrap each anchor call in one.
class WorkScope {
public:
  explicit WorkScope(int64_t Work);
  /// The same with a kernel's own threshold of multiply-adds.
  WorkScope(int64_t Work, int64_t MinParallelWork);
  ~WorkScope();
  WorkScope(const WorkScope &) = delete;
  WorkScope &operator=(const WorkScope &) = delete;

private:
  bool Limited = false;
};

/// The process-wide CPU engine.
dnnl::engine &engine();
/// This thread's stream; also applies numThreads() to oneDNN's OpenMP
/// runtime on this thread when the setting changed.
dnnl::stream &threadStream();

dnnl::memory::dims toDims(const Shape &S);
/// A dense row-major float32 descriptor.
dnnl::memory::desc plainDesc(const dnnl::memory::dims &D);
/// A float32 descriptor with explicit strides (transposed operands).
dnnl::memory::desc stridedDesc(const dnnl::memory::dims &D,
                               const dnnl::memory::dims &Strides);
/// A memory object over T's data (no copy).
dnnl::memory wrap(const Tensor &T, const dnnl::memory::desc &D);
// The CPU kernels' shared services, used here as they were defined here.
using cpu::allFloat32;
using cpu::choiceFromEnvironment;
using cpu::cpuHasAvx512;
using cpu::runPartsOnPool;
using cpu::viewOf;

/// The identity of a cached primitive: integers naming everything it was
/// created for (a kind tag, dims, strides, post-ops with the bit patterns of
/// their parameters, the thread count). A caller keeps one per thread and
/// clears it per call, so that a lookup allocates nothing.
struct PrimitiveKey {
  std::vector<int64_t> words;

  void clear() { words.clear(); }
  void add(int64_t W) { words.push_back(W); }
  /// A float by its bit pattern: distinct values (0 and -0 too) differ.
  void addFloat(float F);
  /// The count, then the values (so that lists of any length stay apart).
  void addList(const int64_t *Values, size_t N);
  /// A memory descriptor by its C struct's bytes (plain data: layout, dims,
  /// strides, blocking; zero-initialized by oneDNN).
  void addDesc(const dnnl::memory::desc &D);
  bool operator==(const PrimitiveKey &) const = default;
};
struct PrimitiveKeyHash {
  size_t operator()(const PrimitiveKey &K) const;
};

/// Whether T, broadcast against a blocked conv output Out ([N, M/o, H, W,
/// o]), holds one value per output channel in channel order: its only
/// non-1 axes are the channel blocks (a per-channel add in CHW<o>c form).
bool isPerChannelBlocked(const Tensor &T, int64_t M, const Shape &Out);

/// Post-ops as oneDNN attributes. DstDims are the anchor's dims as oneDNN
/// sees them; OutToDst maps each axis of the logical output shape Out to a
/// oneDNN axis (several consecutive output axes may share one, e.g. dense
/// flattens leading dims; oneDNN axes no output axis maps to are 1).
struct PostOpPlan {
  dnnl::post_ops ops;
  std::vector<dnnl::memory::desc> operandDescs; // one per binary post-op
  std::vector<Tensor> operands;
  /// With AllowSum: the operand of an `add` of Out's own shape (a residual
  /// connection), done as oneDNN's `sum` post-op. The caller puts it into the
  /// destination before executing. A binary post-op with a full-size operand
  /// would pin src1 to the plain layout, and oneDNN 2.6's blocked direct
  /// convolutions refuse that (falling back to slow plain gemm kernels).
  std::optional<Tensor> sumOperand;
  /// Kinds, parameters and operand dims, for the primitive cache key.
  PrimitiveKey key;
};
/// BlockedDst, when given, is Out's layout (NCHW{b}c): an operand of Out's
/// full size is read in it, and one that is neither that, per-channel nor
/// spatially broadcast is refused (its bytes are in no plain order).
std::optional<PostOpPlan>
planPostOps(const PostOps &P, const Shape &Out,
            const dnnl::memory::dims &DstDims, const std::vector<int> &OutToDst,
            bool AllowSum = false,
            const dnnl::memory::desc *BlockedDst = nullptr);
/// Adds the binary post-op operands to oneDNN's C argument list; Keep holds
/// the operands' memory objects until the call has run.
void addPostOpArgs(const PostOpPlan &Plan, std::vector<dnnl_exec_arg_t> &Args,
                   std::vector<dnnl::memory> &Keep);

/// A created primitive and the layouts it settled on. Null prim: oneDNN had
/// no implementation (remembered, so that it is not asked again).
struct CachedPrimitive {
  std::optional<dnnl::primitive> prim;
  dnnl::memory::desc src, weights, dst, bias;
  /// The primitive's scratchpad; primitives are created with
  /// scratchpad_mode::user because Debian's oneDNN (OpenMP runtime, no
  /// DNNL_ENABLE_CONCURRENT_EXEC) shares one library scratchpad between
  /// threads, which breaks VMs running on several threads.
  dnnl::memory::desc scratchpad;
};

/// This thread's memory objects for a cached primitive's arguments (in the
/// layouts it was created for), pointed at each call's buffers: creating
/// them per call (a few allocations each) cost more than the rest of a
/// small call's bookkeeping. Owner keeps the primitive, and so the key's
/// address, alive. A caller may keep its own per-primitive facts in the
/// flags (set when the entry is new).
struct ThreadMemories {
  std::shared_ptr<const CachedPrimitive> owner;
  dnnl::memory src, weights, bias, dst;
  bool fresh = true; // created by this lookup
  unsigned flags = 0;
};
ThreadMemories &threadMemories(const std::shared_ptr<const CachedPrimitive> &P);

/// Primitive attributes every Rivet primitive starts from (user scratchpad).
dnnl::primitive_attr baseAttr();
/// Runs P on this thread's stream with a thread-local scratchpad.
void executePrimitive(const CachedPrimitive &P,
                      std::unordered_map<int, dnnl::memory> Args);
/// The same with the arguments in oneDNN's C form (no map to build per
/// call); the scratchpad is appended to Args.
void executePrimitive(const CachedPrimitive &P,
                      std::vector<dnnl_exec_arg_t> &Args);
/// The cached primitive for Key, or null; appends the thread count to Key.
std::shared_ptr<const CachedPrimitive> lookupPrimitive(PrimitiveKey &Key);
/// Creates the primitive for Key (as completed by lookupPrimitive) and
/// caches it; a thread that raced to insert the same key first wins.
std::shared_ptr<const CachedPrimitive>
insertPrimitive(const PrimitiveKey &Key,
                const std::function<CachedPrimitive()> &Create);
/// The cached primitive for Key, created by Create on a miss (Key must name
/// everything Create depends on): lookupPrimitive, then insertPrimitive. A
/// template, so that a hit does not wrap Create in a std::function (which
/// allocates for a lambda with more than two captures).
template <class CreateFn>
std::shared_ptr<const CachedPrimitive> findPrimitive(PrimitiveKey &Key,
                                                     CreateFn &&Create) {
  if (std::shared_ptr<const CachedPrimitive> P = lookupPrimitive(Key))
    return P;
  return insertPrimitive(Key, Create);
}

/// A copy of the constant weights W in another form (a layout, a
/// transform), made by Make on first use and then cached by W's storage
/// identity (see the file comment) and Form, which names the copy's form
/// (a kind tag first, so that different transforms stay apart).
dnnl::memory cachedWeightCopy(const Tensor &W, const PrimitiveKey &Form,
                              const std::function<dnnl::memory()> &Make);
/// W (in layout Plain) in layout Wanted: a cached copy when Constant (see
/// the file comment), else a fresh reorder. Returns W itself when the
/// layouts agree.
dnnl::memory weightsIn(const Tensor &W, const dnnl::memory::desc &Plain,
                       const dnnl::memory::desc &Wanted, bool Constant);

/// Copies From into To, converting the layout (cached reorder primitive).
void reorderInto(const dnnl::memory &From, const dnnl::memory &To);
/// Reorders From into a new memory of layout To, or returns From when the
/// layouts agree.
dnnl::memory reorderTo(const dnnl::memory &From, const dnnl::memory::desc &To);

/// Memory of layout D over this thread's scratch buffer number Slot (0..3),
/// grown as needed and kept: the blocked copies of activations around a
/// call would otherwise be fresh allocations (page faults) every call.
/// Valid until the next call with the same Slot on this thread.
dnnl::memory threadScratch(const dnnl::memory::desc &D, unsigned Slot);

} // namespace rivet::dnnlctx
