//===- TestCase.cc - One ONNX backend test --------------------------------===//
#include "TestCase.h"

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxTensor.h"
#include "ir/Interpreter.h"
#include "ir/TypeInference.h"
#include "ir/transforms/Pass.h"
#include "kernels/Error.h"
#include "kernels/StringTable.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"
#include "vm/cuda/Gpu.h"

#include <onnx/onnx-data.pb.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>

namespace fs = std::filesystem;

namespace rivet::conformance {

namespace {

using ir::Value;

std::string readFile(const fs::path &P) {
  std::ifstream In(P, std::ios::binary);
  if (!In)
    fail("cannot read '{}'", P.string());
  return {std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>()};
}

template <typename Proto> Proto parseProto(const fs::path &P) {
  Proto M;
  std::string Bytes = readFile(P);
  if (!M.ParseFromString(Bytes))
    fail("cannot parse '{}'", P.string());
  return M;
}

/// Builds a prelude List value from its elements.
Value makeList(const ir::Module &M, const std::vector<Value> &Elems) {
  Value L = Value::adt(M.findConstructor("Nil"), {});
  for (auto It = Elems.rbegin(); It != Elems.rend(); ++It)
    L = Value::adt(M.findConstructor("Cons"), {*It, L});
  return L;
}

Value decodeTensor(const onnx::TensorProto &T, const std::string &What) {
  return Value(frontend::tensorFromProto(T, "", What));
}

Value decodeSequence(const ir::Module &M, const onnx::SequenceProto &S,
                     const std::string &What) {
  std::vector<Value> Elems;
  for (const auto &T : S.tensor_values())
    Elems.push_back(decodeTensor(T, What));
  if (S.sequence_values_size() || S.map_values_size() ||
      S.optional_values_size())
    fail("{}: only sequences of tensors are supported", What);
  return makeList(M, Elems);
}

/// Reads a .pb file according to the declared type of the value.
Value readValue(const ir::Module &M, const onnx::TypeProto &Type,
                const fs::path &P) {
  std::string What = P.string();
  switch (Type.value_case()) {
  case onnx::TypeProto::kSequenceType:
    return decodeSequence(M, parseProto<onnx::SequenceProto>(P), What);
  case onnx::TypeProto::kOptionalType: {
    auto O = parseProto<onnx::OptionalProto>(P);
    switch (O.elem_type()) {
    case onnx::OptionalProto::TENSOR:
      return Value::adt(M.findConstructor("Some"),
                        {decodeTensor(O.tensor_value(), What)});
    case onnx::OptionalProto::SEQUENCE:
      return Value::adt(M.findConstructor("Some"),
                        {decodeSequence(M, O.sequence_value(), What)});
    case onnx::OptionalProto::UNDEFINED:
      return Value::adt(M.findConstructor("None"), {});
    default: fail("{}: unsupported optional element", What);
    }
  }
  default: {
    Tensor T =
        frontend::tensorFromProto(parseProto<onnx::TensorProto>(P), "", What);
    // ONNX <= 1.13 wrote bfloat16 test data as UINT16 bit patterns (NumPy
    // has no bfloat16): read them as the declared bfloat16.
    if (Type.has_tensor_type() &&
        Type.tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
        T.dtype() == DType::UInt16)
      T = Tensor(T.storage(), T.byteOffset(), T.shape(), DType::BFloat16);
    return Value(T);
  }
  }
}

/// Compares one value; returns an empty string when it agrees.
std::string compare(const Value &Actual, const Value &Expected, double Rtol,
                    double Atol) {
  if (Expected.isTensor()) {
    if (!Actual.isTensor())
      return "expected a tensor, got " + ir::valueToString(Actual);
    const Tensor &A = Actual.tensor(), &E = Expected.tensor();
    if (A.dtype() != E.dtype() || A.shape() != E.shape())
      return fmt::format("expected {}, got {}", E.typeString(), A.typeString());
    if (!allClose(A, E, Rtol, Atol)) {
      if (isString(A.dtype()))
        for (int64_t I = 0; I < A.numel(); ++I)
          if (stringElement(A, I) != stringElement(E, I))
            return fmt::format("strings differ at element {} (got \"{}\", "
                               "expected \"{}\")",
                               I, stringElement(A, I), stringElement(E, I));
      double MaxAbs = 0;
      int64_t Worst = 0;
      for (int64_t I = 0; I < A.numel(); ++I) {
        double X = A.elementAsDouble(I), Y = E.elementAsDouble(I);
        if (X == Y || (std::isnan(X) && std::isnan(Y)))
          continue; // equal infinities would give NaN below
        double D = std::fabs(X - Y);
        if (!(D <= MaxAbs)) {
          MaxAbs = D;
          Worst = I;
        }
      }
      return fmt::format("values differ: max abs error {} at element {} "
                         "(got {}, expected {})",
                         MaxAbs, Worst, A.elementAsDouble(Worst),
                         E.elementAsDouble(Worst));
    }
    return "";
  }
  if (Expected.isADT()) {
    if (!Actual.isADT() || Actual.ctor()->name != Expected.ctor()->name)
      return fmt::format("expected {}, got {}", ir::valueToString(Expected),
                         ir::valueToString(Actual));
    for (size_t I = 0; I < Expected.fields().size(); ++I) {
      std::string D =
          compare(Actual.fields()[I], Expected.fields()[I], Rtol, Atol);
      if (!D.empty())
        return D;
    }
    return "";
  }
  return "unexpected kind of expected value";
}

/// Both executors see only inputs that match @main's declared types: data
/// that contradicts the model's declaration is refused, as `rivet run` does.
void checkInput(const ir::Var &Param, const Value &V, const std::string &Name) {
  auto *T = Param->typeAnnotation
                ? Param->typeAnnotation->as<ir::TensorTypeNode>()
                : nullptr;
  if (!T || !V.isTensor())
    return;
  const Tensor &X = V.tensor();
  bool Ok = X.dtype() == T->dtype;
  if (Ok && T->shape) {
    Ok = (int64_t)T->shape->size() == X.rank();
    for (size_t I = 0; Ok && I < T->shape->size(); ++I)
      Ok = !(*T->shape)[I].isConst() || (*T->shape)[I].value == X.shape()[I];
  }
  if (!Ok)
    fail("input '{}': expected {}, got {}", Name,
         ir::typeToString(Param->typeAnnotation), X.typeString());
}

} // namespace

bool runTestCase(const fs::path &Dir, const std::string &Executor, int OptLevel,
                 std::string &Msg, const std::string &Codegen,
                 const std::string &Target) {
  try {
    fs::path ModelPath = Dir / "model.onnx";
    auto Model = parseProto<onnx::ModelProto>(ModelPath);
    ir::Module M = frontend::importOnnxFile(ModelPath.string());
    ir::inferTypes(M);

    std::vector<const onnx::ValueInfoProto *> Inputs, Outputs;
    std::set<std::string> Init;
    for (const auto &I : Model.graph().initializer())
      Init.insert(I.name());
    for (const auto &I : Model.graph().input())
      if (!Init.count(I.name()))
        Inputs.push_back(&I);
    for (const auto &O : Model.graph().output())
      Outputs.push_back(&O);

    std::vector<fs::path> Sets;
    for (const auto &E : fs::directory_iterator(Dir))
      if (E.is_directory() &&
          E.path().filename().string().rfind("test_data_set_", 0) == 0)
        Sets.push_back(E.path());
    std::sort(Sets.begin(), Sets.end());
    if (Sets.empty())
      fail("no test_data_set_* in {}", Dir.string());

    // One engine for every data set: the interpreter, or one executable
    // and one VM (so that data sets of different shapes share them).
    if (Executor != "interp" && Executor != "vm" && Executor != "rvx")
      fail("unknown executor '{}'", Executor);
    std::unique_ptr<ir::Interpreter> Interp;
    std::shared_ptr<vm::Executable> Exe;
    std::unique_ptr<vm::VirtualMachine> VM;
    if (Executor == "interp") {
      if (OptLevel >= 0) {
        ir::PassContext Ctx;
        Ctx.optLevel = OptLevel;
        ir::optimize(M, Ctx);
      }
      Interp = std::make_unique<ir::Interpreter>(M);
    } else {
      vm::CompileOptions CO;
      CO.optLevel = OptLevel < 0 ? 3 : OptLevel;
      if (Codegen == "off")
        CO.codegen.mode = vm::NativeCode::Off;
      else if (Codegen == "jit")
        CO.codegen.mode = vm::NativeCode::Jit;
      else if (Codegen == "so")
        CO.codegen.mode = vm::NativeCode::SharedObject;
      else if (!Codegen.empty())
        fail("unknown codegen mode '{}'", Codegen);
      if (Target == "cuda") {
        // Every kernel the GPU can run goes there: the suite's tensors are
        // small, which placement would otherwise keep on the host.
        CO.codegen.target = Device::CUDA;
        CO.codegen.smallKernelsOnGpu = true;
      } else if (Target != "cpu")
        fail("unknown target '{}'", Target);
      Exe = vm::compile(M, CO);
      if (Executor == "rvx") {
        // What `rivet compile` writes and `rivet run m.rvx` reads.
        std::vector<uint8_t> Bytes = Exe->serialize();
        Exe = vm::Executable::deserialize(Bytes.data(), Bytes.size(),
                                          "model.rvx");
      }
      if (Exe->needsGpu() && !vm::cuda::available()) {
        Msg = "compiled for cuda (no GPU here to run it)";
        return true;
      }
      VM = std::make_unique<vm::VirtualMachine>(Exe);
    }
    auto Call = [&](std::vector<Value> Args) -> Value {
      if (Interp)
        return Interp->call("main", std::move(Args));
      std::vector<vm::ObjectRef> Objects;
      for (const Value &A : Args)
        Objects.push_back(vm::toObject(A, *Exe));
      return vm::toValue(VM->invoke("main", std::move(Objects)), *Exe, M);
    };
    const auto *Main = M.function("main")->as<ir::FunctionNode>();
    for (const fs::path &Set : Sets) {
      std::vector<Value> Args;
      for (size_t I = 0; I < Inputs.size(); ++I) {
        fs::path P = Set / fmt::format("input_{}.pb", I);
        if (!fs::exists(P))
          fail("{}: missing input file for '{}'", Set.string(),
               Inputs[I]->name());
        Args.push_back(readValue(M, Inputs[I]->type(), P));
        checkInput(Main->params[I], Args.back(), Inputs[I]->name());
      }
      Value Result = Call(std::move(Args));
      std::vector<Value> Results;
      if (Outputs.size() == 1)
        Results.push_back(Result);
      else
        Results = Result.fields();
      if (Results.size() != Outputs.size())
        fail("{} outputs, expected {}", Results.size(), Outputs.size());
      for (size_t I = 0; I < Outputs.size(); ++I) {
        fs::path P = Set / fmt::format("output_{}.pb", I);
        Value Expected = readValue(M, Outputs[I]->type(), P);
        std::string D = compare(Results[I], Expected, 1e-3, 1e-7);
        if (!D.empty())
          fail("{}, output {} ('{}'): {}", Set.filename().string(), I,
               Outputs[I]->name(), D);
      }
    }
    Msg = fmt::format("{} data sets", Sets.size());
    return true;
  } catch (const Error &E) {
    Msg = E.what();
  } catch (const std::exception &E) {
    Msg = std::string("unexpected exception: ") + E.what();
  }
  return false;
}

} // namespace rivet::conformance
