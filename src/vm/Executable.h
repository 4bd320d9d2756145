//===- Executable.h - Compiled program for the VM ---------------*- C++ -*-===//
//
// Everything the VM needs and nothing of the compiler: functions with their
// bytecode, constants, the kernel table, constructor and string tables, and
// the entry point's signature. One Executable may be shared (read-only) by
// several VirtualMachines on different threads. Saved as a .rvx file
// (docs/executable-format.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"
#include "kernels/Device.h"
#include "kernels/Kernel.h"
#include "kernels/NativeKernelAbi.h"
#include "vm/Instruction.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivet::vm {

/// Where an InvokeKernel's values come from (ir/Origin.h), for rivet check
/// --localize: the origins of the operator calls it computes, in order (a
/// fused kernel has several), and the one whose value its outputs are.
/// Kept by the compiler in memory; a loaded .rvx has none.
struct KernelOrigins {
  std::vector<std::string> covers;
  std::string output; // "" when no call's value is observable
};

struct VMFunction {
  std::string name;
  uint32_t numParams = 0;
  uint32_t numRegisters = 0; // params occupy registers 0 .. numParams-1
  std::vector<Instruction> code;
  std::vector<uint32_t> pool; // register lists of Invoke*, InvokeKernel, Alloc*
  std::vector<int64_t> shapes; // static shapes of AllocTensor
  /// Per instruction (empty when none is known): KernelOrigins of its
  /// InvokeKernel, null for the others and for shape functions.
  std::vector<std::shared_ptr<const KernelOrigins>> origins;
};

/// An entry of the kernel table.
struct KernelEntry {
  enum class Kind : uint8_t {
    /// The registered reference/library kernel `op` with `attrs`; outputs
    /// are preallocated registers.
    Builtin = 0,
    /// The shape function of `op`: writes each output's shape as an int64
    /// 1-D tensor into the output registers.
    ShapeFunction = 1,
    /// Runs `op` allocating its own result (ops whose number of outputs is
    /// data dependent, e.g. split_to_list, which returns a List).
    AllocatingBuiltin = 2,
    /// The generated kernel whose symbol is `op` (Executable::nativeKernels);
    /// outputs are preallocated registers.
    Native = 3,
    /// The output shape of the generated kernel `op`, from its recipe
    /// (NativeKernel::buffers): written like a ShapeFunction's.
    NativeShapeFunction = 4,
    /// The List primitive `op` (list_at, list_insert, ...), which the VM
    /// runs itself (vm/ListPrimitives.h): operands are Lists, tensors and
    /// positions; the result goes to dst, like an AllocatingBuiltin's
    /// (format version 6).
    ListPrimitive = 5,
  };
  /// The largest kind: the loader and the verifier refuse larger values.
  static constexpr Kind kLastKind = Kind::ListPrimitive;
  Kind kind = Kind::Builtin;
  std::string op;
  Attrs attrs;
  /// Bound by Executable::resolve(); not serialized.
  const KernelInfo *info = nullptr;
  /// Native*: the index in Executable::nativeKernels (bound by resolve()).
  uint32_t native = 0;

  bool isNative() const {
    return kind == Kind::Native || kind == Kind::NativeShapeFunction;
  }
  /// Whether an entry of kind K makes its own result, written to the
  /// InvokeKernel's dst (its operand list holds the inputs only).
  static bool returnsResult(Kind K) {
    return K == Kind::AllocatingBuiltin || K == Kind::ListPrimitive;
  }
  /// Whether an entry of kind K may keep its operands past the call (a List
  /// primitive stores the tensor it inserts): they escape the compiler's
  /// lifetime analysis, like the operands of AllocADT.
  static bool keepsOperands(Kind K) { return K == Kind::ListPrimitive; }
};

/// A generated kernel (src/codegen) in the executable's native code, and how
/// the VM calls it (kernels/NativeKernelAbi.h): buffers are the inputs' data
/// then the output's, sizes the kernel's size parameters.
struct NativeKernel {
  /// Extent -(P + 1) of a buffer is size parameter P; >= 0 a constant.
  static int64_t sizeParamDim(uint32_t P) { return -(int64_t)P - 1; }
  /// The value of recipe extent Dim (as sizeParamDim encodes it) for the
  /// size parameters Sizes.
  static int64_t extent(int64_t Dim, const int64_t *Sizes) {
    return Dim >= 0 ? Dim : Sizes[-(Dim + 1)];
  }

  struct Buffer {
    DType dtype = DType::Float32;
    std::vector<int64_t> dims;
  };
  /// Size parameter P is the extent of axis `axis` of input `buffer`.
  struct SizeSource {
    uint32_t buffer = 0;
    uint32_t axis = 0;
  };
  /// Size parameter sizeSources.size() + I is the NumPy broadcast of the
  /// extents `operands` (constants >= 0, or -(Q + 1): size parameter Q, an
  /// earlier one): the operand that is not 1 (1 when all are). The VM
  /// refuses operands that are neither 1 nor that extent, so the kernel's
  /// broadcast reads stay in bounds.
  struct BroadcastSize {
    std::vector<int64_t> operands;
  };
  /// A reduction of operator `op` without an identity (max, min, integer
  /// mean) inside the kernel: the call is an error, as the reference's, when
  /// an extent of `reduced` is 0 and every extent of `kept` (that
  /// operator's result) is positive. Extents are coded as in `dims`.
  struct EmptyReduction {
    std::string op;
    std::vector<int64_t> reduced, kept;
  };

  std::string symbol;
  /// The inputs in parameter order, then the one output. The output's dims
  /// are the recipe of its shape from the inputs' shapes.
  std::vector<Buffer> buffers;
  std::vector<SizeSource> sizeSources;
  /// Size parameters computed from the others (format version 3): the
  /// generated code reads only the sourced ones, but the output's extents
  /// may name these, and each is checked at every call.
  std::vector<BroadcastSize> broadcastSizes;
  /// Checked before every call (format version 4).
  std::vector<EmptyReduction> emptyReductions;
  /// Where its calls run: CUDA when the executable's CUDA code has this
  /// kernel (as the __global__ function `symbol`) and placement put it on
  /// the GPU (format version 5); the CPU code is there either way.
  Device device = Device::CPU;
  /// Bound by Executable::resolve() (or by the compiler for JIT code); not
  /// serialized.
  RivetKernelFn fn = nullptr;

  size_t numInputs() const { return buffers.empty() ? 0 : buffers.size() - 1; }
  /// Sourced and broadcast size parameters together.
  size_t numSizes() const { return sizeSources.size() + broadcastSizes.size(); }
};

/// The code of the native kernels when it is a shared object (the .rvx
/// "native code" section).
struct NativeCodeInfo {
  uint32_t elfMachine = 0; // e_machine of the shared object
  std::string triple, cpu, features;
  /// CPU features (GCC names, RvxFormat.h) the code needs: the loader
  /// refuses the file on a CPU that lacks one.
  std::vector<std::string> requiredFeatures;
  std::vector<uint8_t> sharedObject;
};

/// The GPU code of a CUDA executable (the .rvx "CUDA code" section): one
/// module, as cubins for the architectures it was built for and PTX for
/// newer ones, holding a __global__ function per CUDA native kernel.
struct CudaCodeInfo {
  struct Image {
    std::string arch; // "sm_90" (a cubin) or "compute_90" (PTX)
    bool ptx = false;
    std::vector<uint8_t> bytes; // PTX ends with a NUL byte
  };
  std::vector<Image> images;
};

/// A constructor of an ADT, for GetTag/AllocADT and for printing results.
struct ConstructorInfo {
  std::string adt;
  std::string name;
  uint32_t arity = 0;
};

/// What an entry function expects of a parameter (to check inputs), or
/// what it gives as a result (to describe outputs).
struct ParamInfo {
  std::string name; // the user-facing name (ONNX input/output or IR var name)
  bool isTensor = true;
  DType dtype = DType::Float32;
  /// Extents; -1 for a dynamic dimension; nullopt for an unknown rank.
  std::optional<std::vector<int64_t>> dims;
  std::string typeText; // the declared IR type, for messages
};

class Executable {
public:
  std::vector<VMFunction> functions;
  std::map<std::string, uint32_t> functionIndex;
  std::vector<Tensor> constants;
  std::vector<KernelEntry> kernels;
  std::vector<ConstructorInfo> constructors; // tag = index
  std::vector<std::string> strings;          // Fatal messages
  std::vector<ParamInfo> mainParams;
  std::vector<std::string> outputNames; // of main, when known (ONNX)
  /// main's results: one per field of a tuple it returns as its outputs
  /// (several ONNX outputs), else one; empty when unknown (older files).
  std::vector<ParamInfo> mainResults;

  /// Generated kernels: their code is `nativeCode` (a shared object, loaded
  /// by resolve()) or was compiled in process (`nativeJit`: fn already set,
  /// cannot be saved).
  std::vector<NativeKernel> nativeKernels;
  std::optional<NativeCodeInfo> nativeCode;
  bool nativeJit = false;
  /// Keeps the code the kernels' fn point into alive (a loaded NativeLibrary
  /// or the compiler's JIT).
  std::shared_ptr<void> nativeOwner;
  /// When set, the native code is for another machine: resolve() leaves the
  /// kernels unbound and running fails with this reason.
  std::string nativeUnavailable;
  /// Set when some native kernel runs on the GPU.
  std::optional<CudaCodeInfo> cudaCode;
  /// The device kernel-table entry K runs on (its native kernel's; the CPU
  /// for every other kind). Needs the entries bound (resolve()).
  Device kernelDevice(uint32_t K) const;
  /// Whether any kernel runs on the GPU (the executable needs one).
  bool needsGpu() const { return cudaCode.has_value(); }
  /// Fused groups the compiler left on builtin kernels, with codegen's
  /// reason (for `rivet dump`; not saved).
  std::vector<std::string> nativeRefusals;

  /// Binds every kernel entry to the kernel registry and every native
  /// kernel to its symbol (loading the shared object); throws rivet::Error
  /// naming an operator or symbol the runtime does not have.
  void resolve();
  /// The bytecode verifier (vm/Verifier.h): checks the structure of every
  /// function so that the VM can index without checks. Throws rivet::Error
  /// naming the function and instruction. resolve() calls it.
  void verify() const;
  /// Index of the native kernel named Symbol, or -1.
  int64_t findNativeKernel(const std::string &Symbol) const;
  /// Set by resolve() once the kernel table is bound and verify() passed:
  /// a VirtualMachine then does not verify again.
  bool resolved = false;
  /// Index of function Name; throws when absent.
  uint32_t function(const std::string &Name) const;
  /// Tag of constructor Name, or -1.
  int32_t constructorTag(const std::string &Name) const;
  /// The bytecode of every function, one instruction per line, registers
  /// and kernel names readable.
  std::string disassemble() const;

  /// The .rvx file (docs/executable-format.md).
  std::vector<uint8_t> serialize() const;
  void save(const std::string &Path) const;
  /// Validates everything before use; a truncated, corrupted, wrong-version
  /// or wrong-target file is refused with rivet::Error, never a crash. The
  /// result is resolved.
  static std::shared_ptr<Executable>
  deserialize(const uint8_t *Data, size_t Size, const std::string &What);
  static std::shared_ptr<Executable> load(const std::string &Path);
};

} // namespace rivet::vm
