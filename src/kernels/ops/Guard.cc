//===- Guard.cc - Checks of what a program is about to need ---------------===//
//
// require_memory: an out-of-memory error before a loop that would stack more
// than this machine holds, rather than after the memory is full.
//
//===----------------------------------------------------------------------===//
#include "kernels/MemoryLimit.h"
#include "kernels/ops/KernelUtil.h"

namespace rivet::kernels {
namespace {

std::vector<TensorMeta> requireMemoryShape(const std::vector<Tensor> &In,
                                           const Attrs &) {
  checkArity("require_memory", In, 1);
  if (In[0].dtype() != DType::Int64 || In[0].rank() != 0)
    fail("require_memory: expected an int64 scalar, got {}",
         In[0].typeString());
  return {{{}, DType::Int64}};
}

void requireMemoryKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  int64_t N = In[0].elementAsInt(0);
  int64_t Each = attrInt("require_memory", A, "bytes_each");
  uint64_t Limit = memoryLimitBytes();
  // n * each > limit, without overflowing the product.
  if (N > 0 && Each > 0 && (uint64_t)N > Limit / (uint64_t)Each)
    fail("out of memory: {} would take {} x {} bytes, more than the {} bytes "
         "this process may use",
         attrString("require_memory", A, "what"), N, Each, Limit);
  *Out[0].data<int64_t>() = N;
}

} // namespace

RIVET_REGISTER_KERNEL("require_memory", requireMemoryKernel, requireMemoryShape,
                      false);

RIVET_REGISTER_ATTRS(
    "require_memory",
    {{"bytes_each", AttrKind::Int, true, "bytes needed per unit of n"},
     {"what", AttrKind::String, true, "what needs the memory, for the error"}});

} // namespace rivet::kernels
