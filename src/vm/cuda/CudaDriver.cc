//===- CudaDriver.cc - The CUDA driver API, loaded with dlopen ------------===//
//
// libcuda.so.1 is opened once and never closed: device storages, modules and
// graphs may be released during static destruction, after which the
// function pointers must still be valid.
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/CudaDriver.h"

#include "kernels/Error.h"

#include <dlfcn.h>
#include <mutex>

namespace rivet::vm::cuda {
namespace {

struct LoadedDriver {
  Driver Table{};
  bool Usable = false;
  std::string Why; // when not usable
};

/// Resolves Fn as Symbol; false, with Why set, when the driver lacks it.
template <typename F>
bool resolve(void *Lib, const char *Symbol, F &Fn, std::string &Why) {
  Fn = reinterpret_cast<F>(dlsym(Lib, Symbol));
  if (!Fn)
    Why = fmt::format("the CUDA driver is too old (libcuda.so.1 has no {})",
                      Symbol);
  return Fn != nullptr;
}

bool resolveAll(void *Lib, Driver &D, std::string &Why) {
  return resolve(Lib, "cuGetErrorString", D.cuGetErrorString, Why) &&
         resolve(Lib, "cuInit", D.cuInit, Why) &&
         resolve(Lib, "cuDeviceGetCount", D.cuDeviceGetCount, Why) &&
         resolve(Lib, "cuDeviceGet", D.cuDeviceGet, Why) &&
         resolve(Lib, "cuDeviceGetName", D.cuDeviceGetName, Why) &&
         resolve(Lib, "cuDeviceGetAttribute", D.cuDeviceGetAttribute, Why) &&
         resolve(Lib, "cuDevicePrimaryCtxRetain", D.cuDevicePrimaryCtxRetain,
                 Why) &&
         resolve(Lib, "cuCtxSetCurrent", D.cuCtxSetCurrent, Why) &&
         resolve(Lib, "cuStreamCreate", D.cuStreamCreate, Why) &&
         resolve(Lib, "cuStreamSynchronize", D.cuStreamSynchronize, Why) &&
         resolve(Lib, "cuMemAlloc_v2", D.cuMemAlloc, Why) &&
         resolve(Lib, "cuMemFree_v2", D.cuMemFree, Why) &&
         resolve(Lib, "cuMemcpyHtoDAsync_v2", D.cuMemcpyHtoDAsync, Why) &&
         resolve(Lib, "cuMemcpyDtoHAsync_v2", D.cuMemcpyDtoHAsync, Why) &&
         resolve(Lib, "cuMemcpyDtoDAsync_v2", D.cuMemcpyDtoDAsync, Why) &&
         resolve(Lib, "cuModuleLoadDataEx", D.cuModuleLoadDataEx, Why) &&
         resolve(Lib, "cuModuleGetFunction", D.cuModuleGetFunction, Why) &&
         resolve(Lib, "cuModuleUnload", D.cuModuleUnload, Why) &&
         resolve(Lib, "cuLaunchKernel", D.cuLaunchKernel, Why) &&
         resolve(Lib, "cuStreamBeginCapture_v2", D.cuStreamBeginCapture, Why) &&
         resolve(Lib, "cuStreamEndCapture", D.cuStreamEndCapture, Why) &&
         resolve(Lib, "cuGraphInstantiateWithFlags", D.cuGraphInstantiate,
                 Why) &&
         resolve(Lib, "cuGraphLaunch", D.cuGraphLaunch, Why) &&
         resolve(Lib, "cuGraphExecDestroy", D.cuGraphExecDestroy, Why) &&
         resolve(Lib, "cuGraphDestroy", D.cuGraphDestroy, Why);
}

std::string describe(const Driver &D, CUresult R) {
  const char *S = nullptr;
  if (D.cuGetErrorString && D.cuGetErrorString(R, &S) == CUDA_SUCCESS && S)
    return S;
  return fmt::format("unknown CUDA error {}", R);
}

void loadDriver(LoadedDriver &L) {
  void *Lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!Lib) {
    const char *E = dlerror();
    std::string Msg = E ? E : "cannot be loaded";
    // glibc's message already starts with the file name when it is missing.
    if (!Msg.starts_with("libcuda.so.1"))
      Msg = "libcuda.so.1: " + Msg;
    L.Why = "no driver found (" + Msg + ")";
    return;
  }
  Driver &D = L.Table;
  if (!resolveAll(Lib, D, L.Why))
    return;
  CUresult R = D.cuInit(0);
  if (R == CUDA_ERROR_NO_DEVICE) {
    L.Why = "no CUDA device";
    return;
  }
  if (R == CUDA_ERROR_STUB_LIBRARY) { // the stub knows no error strings
    L.Why = "libcuda.so.1 is the CUDA toolkit's stub, not a driver";
    return;
  }
  if (R != CUDA_SUCCESS) { // e.g. CUDA_ERROR_INSUFFICIENT_DRIVER
    L.Why = fmt::format("the CUDA driver cannot start (cuInit: {})",
                        describe(D, R));
    return;
  }
  int Count = 0;
  R = D.cuDeviceGetCount(&Count);
  if (R != CUDA_SUCCESS) {
    L.Why = fmt::format("cannot count CUDA devices (cuDeviceGetCount: {})",
                        describe(D, R));
    return;
  }
  if (Count == 0) {
    L.Why = "no CUDA device";
    return;
  }
  L.Usable = true;
}

/// Loaded on first use, by whichever thread comes first; leaked, like the
/// library itself.
const LoadedDriver &loaded() {
  static std::once_flag Once;
  static LoadedDriver *L = nullptr;
  std::call_once(Once, [] {
    auto *New = new LoadedDriver;
    loadDriver(*New);
    L = New;
  });
  return *L;
}

} // namespace

const Driver *driver(std::string *Why) {
  const LoadedDriver &L = loaded();
  if (!L.Usable && Why)
    *Why = L.Why;
  return L.Usable ? &L.Table : nullptr;
}

std::string errorString(CUresult R) { return describe(loaded().Table, R); }

void failCall(CUresult R, const char *Call) {
  fail("CUDA error in {}: {}", Call, errorString(R));
}

} // namespace rivet::vm::cuda
