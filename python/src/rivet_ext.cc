//===- rivet_ext.cc - The rivet._rivet Python extension (nanobind) --------===//
//
// Modules (ONNX models, .rvir programs), executables and inference sessions
// over the CLI's own program loading, compiling, input checking and output
// flattening (tools/rivet: Program, Engine, Inputs; vm/MainIO.h). Inputs are
// taken without a copy from anything that speaks DLPack or the buffer
// protocol (C-contiguous, on the CPU; others are copied); outputs are NumPy
// arrays over the result tensors' own memory, which they keep alive.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "Localize.h"
#include "NumpyArrays.h"
#include "Options.h"
#include "Program.h"
#include "ReleasedGil.h"
#include "TensorComparison.h"

#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"
#include "kernels/Threading.h"
#include "vm/MainIO.h"
#include "vm/PackedList.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <dlpack/dlpack.h>

#include <chrono>
#include <memory>
#include <mutex>

namespace nb = nanobind;
using namespace nb::literals;

namespace rivet::python {
namespace {

using cli::Program;
using ProgramRef = std::shared_ptr<Program>;

// -- dtypes ------------------------------------------------------------------

bool toRivetDType(nb::dlpack::dtype D, DType &Out) {
  using C = nb::dlpack::dtype_code;
  if (D.lanes != 1)
    return false;
  switch ((C)D.code) {
  case C::Bool: Out = DType::Bool; return D.bits == 8;
  case C::Int:
    switch (D.bits) {
    case 8: Out = DType::Int8; return true;
    case 16: Out = DType::Int16; return true;
    case 32: Out = DType::Int32; return true;
    case 64: Out = DType::Int64; return true;
    }
    return false;
  case C::UInt:
    switch (D.bits) {
    case 8: Out = DType::UInt8; return true;
    case 16: Out = DType::UInt16; return true;
    case 32: Out = DType::UInt32; return true;
    case 64: Out = DType::UInt64; return true;
    }
    return false;
  case C::Float:
    switch (D.bits) {
    case 16: Out = DType::Float16; return true;
    case 32: Out = DType::Float32; return true;
    case 64: Out = DType::Float64; return true;
    }
    return false;
  case C::Bfloat: Out = DType::BFloat16; return D.bits == 16;
  default: return false;
  }
}

bool toDLPackDType(DType T, nb::dlpack::dtype &Out) {
  using C = nb::dlpack::dtype_code;
  auto Set = [&](C Code, int Bits) {
    Out = {(uint8_t)Code, (uint8_t)Bits, 1};
    return true;
  };
  switch (T) {
  case DType::Bool: return Set(C::Bool, 8);
  case DType::Int8: return Set(C::Int, 8);
  case DType::Int16: return Set(C::Int, 16);
  case DType::Int32: return Set(C::Int, 32);
  case DType::Int64: return Set(C::Int, 64);
  case DType::UInt8: return Set(C::UInt, 8);
  case DType::UInt16: return Set(C::UInt, 16);
  case DType::UInt32: return Set(C::UInt, 32);
  case DType::UInt64: return Set(C::UInt, 64);
  case DType::Float16: return Set(C::Float, 16);
  case DType::Float32: return Set(C::Float, 32);
  case DType::Float64: return Set(C::Float, 64);
  case DType::BFloat16: return Set(C::Bfloat, 16);
  default: return false;
  }
}

// -- tensors -----------------------------------------------------------------

/// A rivet tensor as Python sees it (rivet.Tensor): DLPack and NumPy views
/// share its memory.
struct PyTensor {
  Tensor value;
};

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

/// Input Name as a tensor sharing Obj's memory: a rivet.Tensor, or anything
/// nanobind takes as a C-contiguous CPU array (DLPack: PyTorch, JAX, CuPy on
/// the host; the buffer protocol: NumPy, array.array), copied only when it is
/// not C-contiguous; anything else (a list, a scalar) goes through
/// numpy.ascontiguousarray, with the parameter's dtype Want when known.
Tensor toTensor(nb::handle Obj, const std::string &Name,
                std::optional<DType> Want = std::nullopt) {
  if (std::optional<Tensor> T = tensorOverNumpy(Obj.ptr()))
    return std::move(*T);
  if (nb::isinstance<PyTensor>(Obj))
    return nb::cast<PyTensor &>(Obj).value;
  InArray A;
  if (!nb::try_cast<InArray>(Obj, A, /*convert=*/true)) {
    nb::object NP = nb::module_::import_("numpy");
    nb::object Arr = Want && *Want != DType::BFloat16 &&
                             dtypeInfo(*Want).kind != DTypeKind::Narrow &&
                             dtypeInfo(*Want).kind != DTypeKind::String
                         ? NP.attr("ascontiguousarray")(
                               Obj, "dtype"_a = std::string(dtypeName(*Want)))
                         : NP.attr("ascontiguousarray")(Obj);
    if (!nb::try_cast<InArray>(Arr, A, true))
      fail("input '{}': cannot read a {} as a tensor", Name,
           nb::inst_name(Obj).c_str());
  }
  DType T;
  if (!toRivetDType(A.dtype(), T))
    fail("input '{}': unsupported element type (DLPack code {}, {} bits)", Name,
         (int)A.dtype().code, (int)A.dtype().bits);
  Shape Sh(A.ndim());
  for (size_t I = 0; I < A.ndim(); ++I)
    Sh[I] = (int64_t)A.shape(I);
  size_t NBytes = A.nbytes();
  // The storage holds a reference to the array; whoever drops the last one
  // (a result aliasing an input may outlive the call) takes the GIL.
  auto *Keep = new InArray(std::move(A));
  auto S = Storage::wrap(const_cast<void *>(Keep->data()), NBytes, [Keep] {
    nb::gil_scoped_acquire G;
    delete Keep;
  });
  return Tensor(std::move(S), 0, std::move(Sh), T);
}

/// A NumPy array over T's memory, keeping T alive; None for an undefined
/// tensor (an empty Option).
nb::object toNumpy(const Tensor &T) {
  if (!T.defined())
    return nb::none();
  if (PyObject *A = numpyOverTensor(T))
    return nb::steal(A);
  if (PyErr_Occurred())
    throw nb::python_error();
  nb::dlpack::dtype D;
  if (!toDLPackDType(T.dtype(), D))
    fail("an output of type {} has no NumPy dtype", T.typeString());
  std::vector<size_t> Sh(T.shape().begin(), T.shape().end());
  if (!T.hasData()) // no elements
    return nb::cast(nb::ndarray<nb::numpy>(nullptr, Sh.size(), Sh.data(),
                                           nb::handle(), nullptr, D));
  if (T.device() != Device::CPU)
    fail("an output lives on the GPU; only host results are returned");
  auto *Keep = new Tensor(T);
  nb::capsule Owner(Keep, [](void *P) noexcept { delete (Tensor *)P; });
  return nb::cast(nb::ndarray<nb::numpy>(T.rawData(), Sh.size(), Sh.data(),
                                         Owner, nullptr, D));
}

void dlpackCapsuleDestructor(PyObject *Cap) {
  // Still named "dltensor": nobody consumed it; release it ourselves.
  if (PyCapsule_IsValid(Cap, "dltensor")) {
    auto *M = (DLManagedTensor *)PyCapsule_GetPointer(Cap, "dltensor");
    if (M && M->deleter)
      M->deleter(M);
  } else {
    PyErr_Clear();
  }
}

nb::object dlpackOf(const Tensor &T) {
  if (!T.hasData())
    fail("tensor {} has no data to share", T.typeString());
  DLManagedTensor *M = T.toDLPack();
  PyObject *Cap = PyCapsule_New(M, "dltensor", dlpackCapsuleDestructor);
  if (!Cap) {
    M->deleter(M);
    throw nb::python_error();
  }
  return nb::steal(Cap);
}

// -- results -----------------------------------------------------------------

/// A constructed ADT value (rivet.ADT): its constructor and fields.
struct PyADT {
  std::string adt, constructor;
  nb::list fields;
};

nb::object fromObject(const vm::ObjectRef &O, const vm::Executable &Exe) {
  if (!O)
    return nb::none();
  switch (O->kind) {
  case vm::ObjectKind::Tensor:
    return nb::cast(PyTensor{vm::asTensor(O, "result")});
  case vm::ObjectKind::ADT: {
    const auto &A = vm::asADT(O, "result");
    if (A.tag == vm::ADTObj::kTupleTag) {
      nb::list L;
      for (const vm::ObjectRef &F : A.fields)
        L.append(fromObject(F, Exe));
      return nb::tuple(L);
    }
    PyADT R;
    if (A.tag >= 0 && (size_t)A.tag < Exe.constructors.size()) {
      R.adt = Exe.constructors[A.tag].adt;
      R.constructor = Exe.constructors[A.tag].name;
    }
    for (const vm::ObjectRef &F : A.fields)
      R.fields.append(fromObject(F, Exe));
    return nb::cast(std::move(R));
  }
  case vm::ObjectKind::List: {
    const auto *L = O->as<vm::ListObj>();
    nb::list Out;
    for (size_t I = 0; I < L->size(); ++I)
      Out.append(fromObject((*L)[I], Exe));
    return Out;
  }
  default:
    fail("@main returned a closure or storage, which has no Python value");
  }
}

// -- modules and executables --------------------------------------------------

/// rivet.Module: a type-checked IR module (from ONNX or .rvir text).
struct PyModule {
  ProgramRef prog;
};

/// rivet.Executable: bytecode (and, when compiled here, the module it came
/// from, for the reference interpreter).
struct PyExecutable {
  ProgramRef prog;
};

cli::LoadedModel modelFromModule(ir::Module M, const std::string &What) {
  cli::LoadedModel L;
  L.module = std::move(M);
  if (!L.module.hasFunction("main"))
    fail("{}: the program has no @main function", What);
  ir::inferTypes(L.module);
  const auto *Main = L.module.function("main")->as<ir::FunctionNode>();
  if (!Main)
    fail("{}: @main is not a function", What);
  for (const ir::Var &P : Main->params)
    L.inputNames.push_back(P->nameHint);
  return L;
}

PyModule loadModule(const std::string &Path) {
  auto P = std::make_shared<Program>();
  P->path = Path;
  P->model = cli::loadModel(Path);
  P->inputNames = P->model->inputNames;
  P->outputNames = P->model->outputNames;
  return {P};
}

PyModule parseText(const std::string &Text, const std::string &Name) {
  auto P = std::make_shared<Program>();
  P->path = Name;
  P->model = modelFromModule(ir::parseModule(Text, Name), Name);
  P->inputNames = P->model->inputNames;
  return {P};
}

vm::NativeCode parseCodegen(const std::string &S) {
  if (S == "so")
    return vm::NativeCode::SharedObject;
  if (S == "jit")
    return vm::NativeCode::Jit;
  if (S == "off")
    return vm::NativeCode::Off;
  fail("codegen must be 'so', 'jit' or 'off', got '{}'", S);
}

PyExecutable
compileModule(const PyModule &M, int OptLevel, const std::string &Target,
              const std::map<std::string, std::vector<int64_t>> &InputShapes,
              const std::string &Codegen, bool PlanMemory) {
  if (OptLevel < 0 || OptLevel > 3)
    fail("opt_level must be 0..3, got {}", OptLevel);
  vm::CompileOptions Opts;
  Opts.optLevel = OptLevel;
  Opts.planMemory = PlanMemory;
  Opts.codegen.mode = parseCodegen(Codegen);
  if (Target == "cpu" || Target == "llvm")
    Opts.codegen.target = Device::CPU;
  else if (Target == "cuda")
    Opts.codegen.target = Device::CUDA;
  else
    fail("target must be 'cpu' or 'cuda', got '{}'", Target);
  for (const auto &[Name, Dims] : InputShapes) {
    const auto &Names = M.prog->inputNames;
    if (std::find(Names.begin(), Names.end(), Name) == Names.end())
      fail("input_shapes: the model has no input '{}'", Name);
  }
  Opts.inputShapes = InputShapes;
  auto P = std::make_shared<Program>(*M.prog);
  P->exe = nullptr;
  {
    nb::gil_scoped_release G;
    cli::compileProgram(*P, Opts);
  }
  return {P};
}

PyExecutable loadExecutable(nb::handle Src) {
  auto P = std::make_shared<Program>();
  if (nb::isinstance<nb::bytes>(Src) || nb::isinstance<nb::bytearray>(Src) ||
      nb::isinstance<nb::memoryview>(Src)) {
    nb::bytes B =
        nb::isinstance<nb::bytes>(Src)
            ? nb::borrow<nb::bytes>(Src)
            : nb::bytes(nb::module_::import_("builtins").attr("bytes")(Src));
    P->path = "<bytes>";
    P->exe = vm::Executable::deserialize((const uint8_t *)B.c_str(), B.size(),
                                         "<bytes>");
  } else {
    std::string Path =
        nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(Src));
    P->path = Path;
    if (!cli::isRvxPath(Path))
      fail("{}: not a .rvx executable (compile a model with rivet.compile)",
           Path);
    P->exe = vm::Executable::load(Path);
  }
  for (const vm::ParamInfo &I : P->exe->mainParams)
    P->inputNames.push_back(I.name);
  P->outputNames = P->exe->outputNames;
  return {P};
}

// -- sessions ----------------------------------------------------------------

/// A node argument of get_inputs()/get_outputs().
struct NodeArg {
  std::string name;
  nb::object shape; // list of int or None per dim; None: unknown rank
  std::string dtype;
  std::string type;
};

/// rivet.InferenceSession: one executable, a VirtualMachine per concurrent
/// caller (a VM is single-threaded; they share the executable).
class Session {
public:
  Session(ProgramRef P, int NumThreads)
      : Prog(std::move(P)), NumThreads(NumThreads) {
    if (!Prog->exe)
      fail("{}: the program is not compiled", Prog->path);
    for (const vm::ParamInfo &I : exe().mainParams) {
      PyObject *Key = PyUnicode_InternFromString(I.name.c_str());
      if (!Key)
        throw nb::python_error();
      InputKeys.push_back(nb::steal(Key));
    }
  }

  const Program &program() const { return *Prog; }
  const vm::Executable &exe() const { return *Prog->exe; }

  std::unique_ptr<vm::VirtualMachine> acquire() {
    {
      std::lock_guard<std::mutex> G(Lock);
      if (!Free.empty()) {
        auto VM = std::move(Free.back());
        Free.pop_back();
        return VM;
      }
    }
    auto VM = std::make_unique<vm::VirtualMachine>(Prog->exe);
    VM->setResultsToHost(true);
    return VM;
  }
  void release(std::unique_ptr<vm::VirtualMachine> VM) {
    std::lock_guard<std::mutex> G(Lock);
    Free.push_back(std::move(VM));
  }

  /// @main's arguments from feeds (a dict by input name, or a sequence in
  /// parameter order), each checked against the executable's parameters.
  std::vector<vm::ObjectRef> mainArgs(nb::handle Feeds) {
    const auto &Params = exe().mainParams;
    std::vector<vm::ObjectRef> Args(Params.size());
    if (nb::isinstance<nb::dict>(Feeds)) {
      nb::dict D = nb::borrow<nb::dict>(Feeds);
      size_t Used = 0;
      for (size_t I = 0; I < Params.size(); ++I) {
        PyObject *V = PyDict_GetItemWithError(D.ptr(), InputKeys[I].ptr());
        if (!V && PyErr_Occurred())
          throw nb::python_error();
        if (!V)
          fail("input '{}' ({}) is missing", Params[I].name,
               vm::paramTypeText(Params[I]));
        Args[I] = argument(nb::handle(V), Params[I]);
        ++Used;
      }
      if (Used != D.size())
        for (auto [K, V] : D) {
          std::string Name = nb::str(K).c_str();
          bool Known = false;
          for (const auto &P : Params)
            Known |= P.name == Name;
          if (!Known)
            fail("the model has no input '{}' (inputs: {})", Name,
                 fmt::join(Prog->inputNames, ", "));
        }
      return Args;
    }
    nb::sequence S = nb::borrow<nb::sequence>(Feeds);
    size_t N = nb::len(S);
    if (N != Params.size())
      fail("@main takes {} inputs, got {}", Params.size(), N);
    for (size_t I = 0; I < N; ++I)
      Args[I] = argument(S[I], Params[I]);
    return Args;
  }

  vm::ObjectRef argument(nb::handle V, const vm::ParamInfo &P) {
    Tensor T = toTensor(
        V, P.name, P.isTensor ? std::optional<DType>(P.dtype) : std::nullopt);
    if (P.isTensor)
      vm::checkMainInput(P, T.shape(), T.dtype());
    return vm::makeTensor(std::move(T));
  }

  /// Runs Fn with the GIL released on a pooled VM.
  vm::ObjectRef call(const std::string &Fn, std::vector<vm::ObjectRef> Args) {
    auto VM = acquire();
    vm::ObjectRef R;
    std::exception_ptr Failure;
    {
      ReleasedGil G;
      ThreadCountScope Threads(NumThreads);
      try {
        R = VM->invoke(Fn, std::move(Args));
      } catch (...) {
        Failure = std::current_exception();
      }
    }
    release(std::move(VM));
    if (Failure)
      std::rethrow_exception(Failure);
    return R;
  }

  nb::list run(nb::handle OutputNames, nb::handle Feeds) {
    vm::ObjectRef R = call("main", mainArgs(Feeds));
    std::vector<vm::OutputTensor> Outs =
        vm::flattenMainResult(R, exe(), Prog->numResults());
    nb::list L;
    if (OutputNames.is_none()) {
      for (const auto &O : Outs)
        L.append(toNumpy(O.tensor));
      return L;
    }
    for (nb::handle H : OutputNames) {
      std::string Name = nb::cast<std::string>(H);
      bool Found = false;
      for (const auto &O : Outs)
        if (O.name() == Name || (O.result < Prog->outputNames.size() &&
                                 Prog->outputNames[O.result] == Name)) {
          L.append(toNumpy(O.tensor));
          Found = true;
          break;
        }
      if (!Found)
        fail("the model has no output '{}'", Name);
    }
    return L;
  }

  nb::object invoke(const std::string &Fn, nb::args Args) {
    std::vector<vm::ObjectRef> A;
    if (Fn == "main") {
      A = mainArgs(Args);
    } else {
      for (size_t I = 0; I < Args.size(); ++I)
        A.push_back(
            vm::makeTensor(toTensor(Args[I], fmt::format("argument {}", I))));
    }
    return fromObject(call(Fn, std::move(A)), exe());
  }

  /// Runs @main Repeat times (after one warm-up) with the VM's per-kernel
  /// profiling on; returns (seconds per run, kernel rows).
  nb::tuple profile(nb::handle Feeds, int Repeat) {
    if (Repeat < 1)
      fail("repeat must be at least 1, got {}", Repeat);
    std::vector<vm::ObjectRef> Args = mainArgs(Feeds);
    auto VM = acquire();
    std::vector<double> Times;
    std::vector<vm::VirtualMachine::KernelTime> K;
    {
      nb::gil_scoped_release G;
      ThreadCountScope Threads(NumThreads);
      VM->invoke("main", Args); // warm-up
      VM->setProfiling(true);
      for (int I = 0; I < Repeat; ++I) {
        auto T0 = std::chrono::steady_clock::now();
        VM->invoke("main", Args);
        Times.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
                .count());
      }
      K = VM->kernelTimes();
      VM->setProfiling(false);
    }
    release(std::move(VM));
    nb::list Rows;
    for (const auto &T : K)
      Rows.append(nb::make_tuple(T.kernel, T.inputs, T.seconds, T.calls,
                                 T.function, T.pc));
    return nb::make_tuple(Times, Rows);
  }

  std::vector<NodeArg> inputs() const { return nodeArgs(exe().mainParams); }

  /// main's results; from an executable older than its result types
  /// (format version 7): the output names with unknown shapes.
  std::vector<NodeArg> outputs() const {
    if (!exe().mainResults.empty())
      return nodeArgs(exe().mainResults);
    std::vector<NodeArg> R;
    for (const std::string &N : program().outputNames)
      R.push_back({N, nb::none(), "", ""});
    return R;
  }

  static std::vector<NodeArg> nodeArgs(const std::vector<vm::ParamInfo> &Ps) {
    std::vector<NodeArg> R;
    for (const auto &P : Ps) {
      NodeArg A;
      A.name = P.name;
      A.type = vm::paramTypeText(P);
      if (P.isTensor) {
        A.dtype = std::string(dtypeName(P.dtype));
        if (P.dims) {
          nb::list S;
          for (int64_t D : *P.dims)
            S.append(D < 0 ? nb::object(nb::none()) : nb::object(nb::int_(D)));
          A.shape = S;
        } else {
          A.shape = nb::none();
        }
      } else {
        A.shape = nb::none();
      }
      R.push_back(std::move(A));
    }
    return R;
  }

  int numThreads() const { return NumThreads; }

private:
  ProgramRef Prog;
  /// Kernels' threads for this session's calls; 0: the process-wide count.
  int NumThreads;
  /// @main's input names as Python strings, to look feeds up without
  /// making a string per call.
  std::vector<nb::object> InputKeys;
  std::mutex Lock;
  std::vector<std::unique_ptr<vm::VirtualMachine>> Free;
};

std::vector<Tensor> tensorsFrom(const Program &P, nb::handle Feeds) {
  std::vector<Tensor> R;
  if (nb::isinstance<nb::dict>(Feeds)) {
    nb::dict D = nb::borrow<nb::dict>(Feeds);
    for (const std::string &Name : P.inputNames) {
      PyObject *V = PyDict_GetItemString(D.ptr(), Name.c_str());
      if (!V)
        fail("input '{}' is missing", Name);
      R.push_back(toTensor(nb::handle(V), Name).clone());
    }
    return R;
  }
  size_t I = 0;
  for (nb::handle H : nb::borrow<nb::sequence>(Feeds))
    R.push_back(toTensor(H, fmt::format("input {}", I++)).clone());
  if (R.size() != P.inputNames.size())
    fail("@main takes {} inputs, got {}", P.inputNames.size(), R.size());
  return R;
}

nb::list outputsList(const std::vector<cli::NamedOutput> &Outs) {
  nb::list L;
  for (const auto &O : Outs)
    L.append(toNumpy(O.tensor));
  return L;
}

/// The reference interpreter on a module: the flattened outputs (@main).
nb::list interpret(const PyModule &M, nb::handle Feeds) {
  std::vector<Tensor> In = tensorsFrom(*M.prog, Feeds);
  std::vector<cli::NamedOutput> Outs;
  {
    nb::gil_scoped_release G;
    cli::runWithStack(cli::BigStackBytes, [&] {
      cli::Engine E(*M.prog, cli::ExecutorKind::Interp, ExecutionLimits());
      Outs = E.run(In);
    });
  }
  return outputsList(Outs);
}

/// `rivet check`: the interpreter and the compiled VM on the same inputs;
/// one row per output (name, type, max abs, max rel, pass, note).
nb::list check(const PyExecutable &X, nb::handle Feeds, double Rtol,
               double Atol) {
  if (!X.prog->model)
    fail("{}: check needs the model (.onnx or .rvir), not a .rvx file",
         X.prog->path);
  std::vector<Tensor> In = tensorsFrom(*X.prog, Feeds);
  std::vector<cli::NamedOutput> Ref, Vm;
  {
    nb::gil_scoped_release G;
    cli::runWithStack(cli::BigStackBytes, [&] {
      cli::Engine R(*X.prog, cli::ExecutorKind::Interp, ExecutionLimits());
      Ref = R.run(In);
      cli::Engine V(*X.prog, cli::ExecutorKind::VM, ExecutionLimits());
      Vm = V.run(In);
    });
  }
  nb::list Rows;
  if (Ref.size() != Vm.size())
    fail("the reference gives {} outputs, the VM {}", Ref.size(), Vm.size());
  for (size_t I = 0; I < Ref.size(); ++I) {
    const auto &R = Ref[I];
    std::string Label = R.name();
    if (R.result < X.prog->outputNames.size())
      Label += fmt::format(" ('{}')", X.prog->outputNames[R.result]);
    cli::Comparison C;
    if (Vm[I].name() != R.name()) {
      C.pass = false;
      C.note = fmt::format("the VM's output is {}", Vm[I].name());
    } else {
      C = cli::compareTensors(Vm[I].tensor, R.tensor, Rtol, Atol);
    }
    std::string Type =
        R.tensor.defined() ? R.tensor.typeString() : std::string("none");
    Rows.append(
        nb::make_tuple(Label, Type, C.maxAbs, C.maxRel, C.pass, C.note));
  }
  return Rows;
}

/// rivet check --localize: where the VM first diverges from the reference,
/// as (text, JSON). Fault: --inject-fault's ORIGIN[:SCALE], or empty.
nb::tuple localize(const PyExecutable &X, nb::handle Feeds, double Rtol,
                   double Atol, const std::string &Fault, size_t Worst) {
  if (!X.prog->model)
    fail("{}: localizing needs the model (.onnx or .rvir), not a .rvx file",
         X.prog->path);
  std::vector<Tensor> In = tensorsFrom(*X.prog, Feeds);
  cli::LocalizeOptions O;
  O.rtol = Rtol;
  O.atol = Atol;
  O.worst = Worst;
  if (!Fault.empty()) {
    try {
      cli::parseFaultSpec(Fault, *X.prog, O);
    } catch (const cli::UsageError &E) {
      fail("{}", E.what());
    }
  }
  cli::LocalizeReport R;
  {
    nb::gil_scoped_release G;
    cli::runWithStack(cli::BigStackBytes, [&] {
      R = cli::localizeDivergence(*X.prog, In, ExecutionLimits(), O);
    });
  }
  return nb::make_tuple(cli::localizeText(R), cli::localizeJson(R));
}

} // namespace
} // namespace rivet::python

using namespace rivet;
using namespace rivet::python;

NB_MODULE(_rivet, m) {
  m.doc() = "Rivet's native bindings (use the rivet package)";
  // NumPy arrays in and out go through its C API when it imports (it is a
  // dependency of the package); otherwise through nanobind's ndarray.
  importNumpyApi();

  static nb::exception<rivet::Error> Err(m, "Error", PyExc_RuntimeError);

  nb::class_<PyTensor>(m, "Tensor")
      .def_prop_ro("shape",
                   [](const PyTensor &T) {
                     nb::list L;
                     for (int64_t D : T.value.shape())
                       L.append(D);
                     return nb::tuple(L);
                   })
      .def_prop_ro("dtype",
                   [](const PyTensor &T) {
                     return std::string(dtypeName(T.value.dtype()));
                   })
      .def("numpy", [](const PyTensor &T) { return toNumpy(T.value); })
      .def(
          "__dlpack__",
          [](const PyTensor &T, nb::kwargs) { return dlpackOf(T.value); },
          "kwargs"_a)
      .def("__dlpack_device__",
           [](const PyTensor &T) {
             return nb::make_tuple(
                 T.value.device() == Device::CPU ? (int)kDLCPU : (int)kDLCUDA,
                 0);
           })
      .def("__repr__",
           [](const PyTensor &T) { return "rivet." + T.value.typeString(); });

  nb::class_<PyADT>(m, "ADT")
      .def_ro("adt", &PyADT::adt)
      .def_ro("constructor", &PyADT::constructor)
      .def_ro("fields", &PyADT::fields)
      .def("__repr__", [](const PyADT &A) {
        return fmt::format("{}({})", A.constructor, nb::repr(A.fields).c_str());
      });

  nb::class_<PyModule>(m, "Module")
      .def_prop_ro("input_names",
                   [](const PyModule &M) { return M.prog->inputNames; })
      .def_prop_ro("output_names",
                   [](const PyModule &M) { return M.prog->outputNames; })
      .def_prop_ro("source", [](const PyModule &M) { return M.prog->path; });

  nb::class_<PyExecutable>(m, "Executable")
      .def("save",
           [](const PyExecutable &X, const std::filesystem::path &Path) {
             X.prog->exe->save(Path.string());
           })
      .def("to_bytes",
           [](const PyExecutable &X) {
             std::vector<uint8_t> B = X.prog->exe->serialize();
             return nb::bytes((const char *)B.data(), B.size());
           })
      .def_prop_ro("input_names",
                   [](const PyExecutable &X) { return X.prog->inputNames; })
      .def_prop_ro("output_names",
                   [](const PyExecutable &X) { return X.prog->outputNames; })
      .def_prop_ro(
          "has_module",
          [](const PyExecutable &X) { return X.prog->model.has_value(); })
      .def("bytecode",
           [](const PyExecutable &X) { return X.prog->exe->disassemble(); });

  nb::class_<NodeArg>(m, "NodeArg")
      .def_ro("name", &NodeArg::name)
      .def_ro("shape", &NodeArg::shape)
      .def_ro("dtype", &NodeArg::dtype)
      .def_ro("type", &NodeArg::type)
      .def("__repr__", [](const NodeArg &A) {
        return fmt::format("NodeArg(name='{}', shape={}, dtype='{}')", A.name,
                           nb::repr(A.shape).c_str(), A.dtype);
      });

  nb::class_<Session>(m, "Session")
      .def(
          "__init__",
          [](Session *S, const PyExecutable &X, int NumThreads) {
            new (S) Session(X.prog, NumThreads);
          },
          "executable"_a, "num_threads"_a = 0)
      .def_prop_ro("num_threads", &Session::numThreads)
      .def("run", &Session::run, "output_names"_a.none(), "feeds"_a)
      .def("invoke", &Session::invoke, "function"_a, "args"_a)
      .def("profile", &Session::profile, "feeds"_a, "repeat"_a = 10)
      .def("get_inputs", &Session::inputs)
      .def("get_outputs", &Session::outputs);

  m.def("load_module", &loadModule, "path"_a);
  m.def("parse", &parseText, "text"_a, "name"_a = "<string>");
  m.def("compile", &compileModule, "module"_a, "opt_level"_a = 3,
        "target"_a = "cpu",
        "input_shapes"_a = std::map<std::string, std::vector<int64_t>>(),
        "codegen"_a = "so", "plan_memory"_a = true);
  m.def("load", &loadExecutable, "source"_a);
  m.def("interpret", &interpret, "module"_a, "inputs"_a);
  m.def("check", &check, "executable"_a, "inputs"_a, "rtol"_a, "atol"_a);
  m.def("localize", &localize, "executable"_a, "inputs"_a, "rtol"_a, "atol"_a,
        "fault"_a, "worst"_a);
  m.def("set_num_threads", &rivet::setNumThreads, "n"_a);
}
