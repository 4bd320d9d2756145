//===- Kernel.h - Kernel calling convention and registry --------*- C++ -*-===//
//
// Every operator has, in this layer, a reference kernel and a shape function,
// registered under the operator's name (the same name the IR's operator
// registry uses). An operator family registers its kernels in its own file
// with RIVET_REGISTER_KERNEL; nothing else needs editing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"
#include "kernels/Device.h"
#include "kernels/Tensor.h"

#include <string>
#include <string_view>
#include <vector>

namespace rivet {

/// Shape and dtype of one output.
struct TensorMeta {
  Shape shape;
  DType dtype;
};

/// Computes output shapes and dtypes. For a data-independent shape function
/// the inputs may be meta tensors (no storage); a data-dependent one (e.g.
/// arange, reshape by a shape tensor) reads input values.
using ShapeFn = std::vector<TensorMeta> (*)(const std::vector<Tensor> &Inputs,
                                            const Attrs &A);

/// Computes outputs into preallocated, correctly shaped tensors. Inputs and
/// outputs never alias unless the kernel is registered as in-place safe.
using KernelFn = void (*)(const std::vector<Tensor> &Inputs,
                          std::vector<Tensor> &Outputs, const Attrs &A);

struct KernelInfo {
  std::string name;
  KernelFn kernel = nullptr;
  ShapeFn shapeFn = nullptr;
  /// True when shapeFn reads input values, not only shapes and dtypes.
  bool dataDependentShape = false;
  /// For a library kernel: the operator it computes (same inputs, outputs
  /// and attributes), faster than its reference kernel but not bit for bit
  /// the same. The VM compiler calls it in the operator's place; the
  /// reference interpreter never does, so differential tests compare it
  /// with the reference.
  std::string libraryFor;
  /// Where the kernel reads its inputs and writes its outputs: a library
  /// kernel for the GPU (cuBLAS, cuDNN) takes device tensors; the VM
  /// compiler places its calls there. The shape function reads shapes only.
  Device device = Device::CPU;
};

class KernelRegistry {
public:
  static KernelRegistry &global();
  /// Registers a kernel; throws if the name is already taken.
  void add(KernelInfo Info);
  /// Null when absent.
  const KernelInfo *find(std::string_view Name) const;
  /// The library kernel registered for operator Op on device D, or null.
  const KernelInfo *libraryKernel(std::string_view Op,
                                  Device D = Device::CPU) const;
  /// Throws rivet::Error("no kernel for operator 'Name'") when absent.
  const KernelInfo &get(std::string_view Name) const;
  std::vector<std::string> names() const;
};

/// Runs the shape function, allocates the outputs and runs the kernel.
std::vector<Tensor> invokeKernel(const KernelInfo &K,
                                 const std::vector<Tensor> &Inputs,
                                 const Attrs &A);

namespace detail {
struct KernelRegistrar {
  explicit KernelRegistrar(KernelInfo Info) {
    KernelRegistry::global().add(std::move(Info));
  }
};
} // namespace detail

} // namespace rivet

#define RIVET_KERNEL_CONCAT2(A, B) A##B
#define RIVET_KERNEL_CONCAT(A, B) RIVET_KERNEL_CONCAT2(A, B)
/// RIVET_REGISTER_KERNEL("add", addKernel, broadcastShape,
/// /*dataDependent=*/false);
#define RIVET_REGISTER_KERNEL(Name, Kernel, Shape, DataDependent)              \
  static ::rivet::detail::KernelRegistrar RIVET_KERNEL_CONCAT(RivetKernelReg_, \
                                                              __COUNTER__)(    \
      ::rivet::KernelInfo{Name, Kernel, Shape, DataDependent, {}})
/// RIVET_REGISTER_LIBRARY_KERNEL("cpu.lstm", "lstm", fastLstm, lstmShape):
/// a library kernel for operator "lstm" (KernelInfo::libraryFor).
#define RIVET_REGISTER_LIBRARY_KERNEL(Name, Op, Kernel, Shape)                 \
  static ::rivet::detail::KernelRegistrar RIVET_KERNEL_CONCAT(RivetKernelReg_, \
                                                              __COUNTER__)(    \
      ::rivet::KernelInfo{Name, Kernel, Shape, false, Op})
/// RIVET_REGISTER_DEVICE_LIBRARY_KERNEL("cuda.conv", "conv", Device::CUDA,
/// gpuConv, convShape): a library kernel for operator "conv" whose inputs
/// and outputs are on the GPU.
#define RIVET_REGISTER_DEVICE_LIBRARY_KERNEL(Name, Op, Dev, Kernel, Shape)     \
  static ::rivet::detail::KernelRegistrar RIVET_KERNEL_CONCAT(RivetKernelReg_, \
                                                              __COUNTER__)(    \
      ::rivet::KernelInfo{Name, Kernel, Shape, false, Op, Dev})
