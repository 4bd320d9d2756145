//===- Kernel.cc - Kernel registry and invocation -------------------------===//
#include "kernels/Kernel.h"

#include <map>
#include <mutex>

namespace rivet {

namespace {
struct RegistryData {
  std::mutex Lock;
  // std::map keeps KernelInfo addresses stable across insertions.
  std::map<std::string, KernelInfo, std::less<>> Kernels;
  /// (operator, device) -> its library kernel's name.
  std::map<std::pair<std::string, Device>, std::string> Library;
};
RegistryData &data() {
  static RegistryData D;
  return D;
}
} // namespace

KernelRegistry &KernelRegistry::global() {
  static KernelRegistry R;
  return R;
}

void KernelRegistry::add(KernelInfo Info) {
  if (Info.name.empty())
    fail("kernel registry: empty kernel name");
  if (!Info.kernel || !Info.shapeFn)
    fail("kernel registry: kernel '{}' needs a kernel and a shape function",
         Info.name);
  RegistryData &D = data();
  std::lock_guard<std::mutex> G(D.Lock);
  std::string Name = Info.name;
  std::string For = Info.libraryFor;
  Device Dev = Info.device;
  if (!D.Kernels.emplace(Name, std::move(Info)).second)
    fail("kernel registry: kernel '{}' is registered twice", Name);
  if (!For.empty() && !D.Library.emplace(std::pair(For, Dev), Name).second)
    fail("kernel registry: operator '{}' has two library kernels on {}", For,
         deviceName(Dev));
}

const KernelInfo *KernelRegistry::libraryKernel(std::string_view Op,
                                                Device Dev) const {
  RegistryData &D = data();
  std::lock_guard<std::mutex> G(D.Lock);
  auto It = D.Library.find(std::pair(std::string(Op), Dev));
  if (It == D.Library.end())
    return nullptr;
  auto K = D.Kernels.find(It->second);
  return K == D.Kernels.end() ? nullptr : &K->second;
}

const KernelInfo *KernelRegistry::find(std::string_view Name) const {
  RegistryData &D = data();
  std::lock_guard<std::mutex> G(D.Lock);
  auto It = D.Kernels.find(Name);
  return It == D.Kernels.end() ? nullptr : &It->second;
}

const KernelInfo &KernelRegistry::get(std::string_view Name) const {
  if (const KernelInfo *K = find(Name))
    return *K;
  fail("no kernel for operator '{}'", Name);
}

std::vector<std::string> KernelRegistry::names() const {
  RegistryData &D = data();
  std::lock_guard<std::mutex> G(D.Lock);
  std::vector<std::string> R;
  for (const auto &KV : D.Kernels)
    R.push_back(KV.first);
  return R;
}

std::vector<Tensor> invokeKernel(const KernelInfo &K,
                                 const std::vector<Tensor> &Inputs,
                                 const Attrs &A) {
  for (size_t I = 0; I < Inputs.size(); ++I)
    if (!Inputs[I].defined() || !Inputs[I].hasData())
      fail("{}: input {} has no data", K.name, I);
  std::vector<TensorMeta> Metas = K.shapeFn(Inputs, A);
  std::vector<Tensor> Outputs;
  Outputs.reserve(Metas.size());
  for (const TensorMeta &M : Metas)
    Outputs.push_back(Tensor::empty(M.shape, M.dtype));
  K.kernel(Inputs, Outputs, A);
  return Outputs;
}

} // namespace rivet
