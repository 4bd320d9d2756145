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

#include <optional>
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

/// Where an operator's result lies inside its first input when it is a view
/// of it: a byte offset into In[0]'s data, and the result's shape.
struct TensorView {
  size_t byteOffset = 0;
  Shape shape;
};

/// For an operator whose result may be a view of its first input (a slice
/// that is one contiguous range of it): that view, or nullopt when the
/// result must be computed (copied) for these inputs.
using ViewFn = std::optional<TensorView> (*)(const std::vector<Tensor> &Inputs,
                                             const Attrs &A);

/// For an operator whose result may be its inputs' bytes one after another
/// (a concatenation with nothing outside the joined axis): whether it is, for
/// these inputs (which the shape function accepted).
using JoinFn = bool (*)(const std::vector<Tensor> &Inputs, const Attrs &A);

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
  /// Set when the result may share the first input's memory: the VM then
  /// makes it a view where viewFn finds one, and runs the kernel otherwise.
  /// The kernel itself always computes a copy (the reference's meaning).
  ViewFn viewFn = nullptr;
  /// For a data-dependent shape function that reads only the values of
  /// some inputs (bit I: input I; a reshape_dyn's target shape): the VM
  /// reuses its last result for the same dtypes, shapes and values of
  /// those inputs. 0: it may read any input's values.
  uint32_t shapeValueInputs = 0;
  /// Set when the result may be the inputs' bytes in order: where they
  /// already lie so in memory that is not reused while viewed (a List's
  /// arena, vm/TensorArena.h), the VM makes the result a view of them. The
  /// kernel itself always computes a copy.
  JoinFn joinFn = nullptr;
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
/// RIVET_REGISTER_KERNEL_SHAPED_BY("reshape_dyn", copyKernel, reshapeDynShape,
/// 1u << 1): a data-dependent shape function that reads the values of the
/// inputs in the mask only (KernelInfo::shapeValueInputs).
#define RIVET_REGISTER_KERNEL_SHAPED_BY(Name, Kernel, Shape, Inputs)           \
  static ::rivet::detail::KernelRegistrar RIVET_KERNEL_CONCAT(                 \
      RivetKernelReg_, __COUNTER__)(::rivet::KernelInfo{                       \
      Name, Kernel, Shape, true, {}, ::rivet::Device::CPU, nullptr, Inputs})
/// RIVET_REGISTER_VIEW_KERNEL("slice_dyn", sliceKernel, sliceShape, true,
/// sliceView): a kernel whose result may be a view (KernelInfo::viewFn).
#define RIVET_REGISTER_VIEW_KERNEL(Name, Kernel, Shape, DataDependent, View)   \
  static ::rivet::detail::KernelRegistrar RIVET_KERNEL_CONCAT(                 \
      RivetKernelReg_, __COUNTER__)(::rivet::KernelInfo{                       \
      Name, Kernel, Shape, DataDependent, {}, ::rivet::Device::CPU, View})
/// RIVET_REGISTER_JOIN_KERNEL("concat_list", concatListKernel,
/// concatListShape, joinsBytes): a kernel whose result may be a view of its
/// adjacent inputs (KernelInfo::joinFn).
#define RIVET_REGISTER_JOIN_KERNEL(Name, Kernel, Shape, Join)                  \
  static ::rivet::detail::KernelRegistrar RIVET_KERNEL_CONCAT(                 \
      RivetKernelReg_, __COUNTER__)(::rivet::KernelInfo{                       \
      Name, Kernel, Shape, false, {}, ::rivet::Device::CPU, nullptr, 0, Join})
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
