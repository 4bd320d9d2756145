//===- MainIO.cc - Inputs and outputs of an executable's @main ------------===//
#include "vm/MainIO.h"

#include "kernels/Error.h"
#include "kernels/Npy.h"
#include "kernels/OutputFiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace rivet::vm {

std::string paramTypeText(const ParamInfo &I) {
  if (!I.typeText.empty())
    return I.typeText;
  std::string S = std::string(dtypeName(I.dtype));
  if (!I.dims)
    return S + "[?]";
  S += "[";
  for (size_t D = 0; D < I.dims->size(); ++D)
    S += (D ? "x" : "") +
         ((*I.dims)[D] < 0 ? std::string("?") : std::to_string((*I.dims)[D]));
  return S + "]";
}

void checkMainInput(const ParamInfo &I, const Shape &Sh, DType Dt) {
  // The types are spelled out only for the error: this runs on every call.
  auto Mismatch = [&](const std::string &Why) {
    fail("input '{}': expected {}, got {} ({})", I.name, paramTypeText(I),
         Tensor::meta(Sh, Dt).typeString(), Why);
  };
  if (Dt != I.dtype)
    Mismatch(fmt::format("dtype {} instead of {}", dtypeName(Dt),
                         dtypeName(I.dtype)));
  if (!I.dims)
    return;
  const std::vector<int64_t> &Dims = *I.dims;
  if (Dims.size() != Sh.size())
    Mismatch(fmt::format("rank {} instead of {}", Sh.size(), Dims.size()));
  for (size_t D = 0; D < Dims.size(); ++D)
    if (Dims[D] >= 0 && Dims[D] != Sh[D])
      Mismatch(
          fmt::format("dimension {} is {} instead of {}", D, Sh[D], Dims[D]));
}

static std::string joinNames(const std::vector<ParamInfo> &Params) {
  std::string S;
  for (const ParamInfo &I : Params)
    S += (S.empty() ? "" : ", ") + I.name;
  return S.empty() ? "none" : S;
}

std::vector<Tensor>
readMainInputs(const Executable &Exe,
               const std::map<std::string, std::string> &Files) {
  const std::vector<ParamInfo> &Params = Exe.mainParams;
  for (const auto &File : Files) {
    const std::string &Name = File.first; // clang 14 cannot capture bindings
    if (std::none_of(Params.begin(), Params.end(),
                     [&](const ParamInfo &I) { return I.name == Name; }))
      fail("unknown input '{}': @main has inputs: {}", Name, joinNames(Params));
  }
  std::vector<Tensor> Args;
  for (const ParamInfo &I : Params) {
    if (!I.isTensor)
      fail("input '{}' has type {}: only tensor inputs can be given as .npy "
           "files",
           I.name, paramTypeText(I));
    auto It = Files.find(I.name);
    if (It == Files.end())
      fail("missing input '{}' of type {} (give --input {}=FILE.npy)", I.name,
           paramTypeText(I), I.name);
    Tensor V = readNpy(It->second);
    checkMainInput(I, V.shape(), V.dtype());
    Args.push_back(std::move(V));
  }
  return Args;
}

namespace {

struct ObjectFlattener {
  const Executable &Exe;
  std::vector<OutputTensor> &Out;
  size_t Index = 0;

  const ConstructorInfo *ctorOf(const ADTObj &A) {
    if (A.tag < 0 || (size_t)A.tag >= Exe.constructors.size())
      return nullptr;
    return &Exe.constructors[(size_t)A.tag];
  }

  void flatten(const ObjectRef &V, size_t Result) {
    if (!V)
      fail("output {} is missing (a null VM value)", Index);
    if (const auto *T = V->as<TensorObj>()) {
      Out.push_back({Index++, std::nullopt, T->value, Result});
      return;
    }
    const auto *A = V->as<ADTObj>();
    if (!A)
      fail("output {} is a {}, which cannot be written as .npy (only "
           "tensors, tuples, Options and Lists of tensors can)",
           Index,
           V->kind == ObjectKind::Closure ? "closure" : "storage buffer");
    if (A->tag == ADTObj::kTupleTag) {
      for (const ObjectRef &F : A->fields)
        flatten(F, Result);
      return;
    }
    const ConstructorInfo *C = ctorOf(*A);
    if (C && C->adt == "Option") {
      // An ONNX optional: None keeps its index (an undefined tensor, not
      // written) so that later outputs keep their numbers.
      if (!A->fields.empty())
        flatten(A->fields[0], Result);
      else
        Out.push_back({Index++, std::nullopt, Tensor(), Result});
      return;
    }
    if (C && C->adt == "List") {
      size_t J = 0;
      const ADTObj *Cur = A;
      while (Cur && !Cur->fields.empty()) {
        const TensorObj *Head = Cur->fields.size() == 2 && Cur->fields[0]
                                    ? Cur->fields[0]->as<TensorObj>()
                                    : nullptr;
        if (!Head)
          fail("output {}: a List whose elements are not tensors cannot be "
               "written as .npy files",
               Index);
        Out.push_back({Index, J++, Head->value, Result});
        Cur = Cur->fields[1] ? Cur->fields[1]->as<ADTObj>() : nullptr;
        if (!Cur)
          fail("output {}: a malformed List (its tail is not a List)", Index);
      }
      ++Index;
      return;
    }
    fail("output {} is a value of constructor {} (tag {}), which cannot be "
         "written as .npy (only tensors, tuples, Options and Lists of "
         "tensors can)",
         Index, C ? C->adt + "." + C->name : std::string("?"), A->tag);
  }
};

} // namespace

std::string OutputTensor::name() const {
  return element ? fmt::format("output_{}_{}", index, *element)
                 : fmt::format("output_{}", index);
}

std::vector<OutputTensor> flattenMainResult(const ObjectRef &Result,
                                            const Executable &Exe,
                                            size_t NumResults) {
  std::vector<OutputTensor> Out;
  ObjectFlattener F{Exe, Out};
  const auto *A = Result ? Result->as<ADTObj>() : nullptr;
  if (NumResults > 1 && A && A->tag == ADTObj::kTupleTag &&
      A->fields.size() == NumResults) {
    for (size_t R = 0; R < NumResults; ++R)
      F.flatten(A->fields[R], R);
    return Out;
  }
  F.flatten(Result, 0);
  return Out;
}

std::vector<std::string>
writeMainOutputs(const std::vector<OutputTensor> &Outputs,
                 const std::vector<std::string> &OutputNames,
                 const std::string &Dir) {
  std::error_code EC;
  std::filesystem::create_directories(Dir, EC);
  if (EC)
    fail("cannot create output directory '{}': {}", Dir, EC.message());
  // All outputs or none: each is written to a temporary file, and the
  // files are renamed into place once every one is complete.
  OutputFiles Files;
  std::vector<std::string> Lines;
  for (const OutputTensor &O : Outputs) {
    // "output_1 (ONNX output 'y'): ..." names the graph output it came from.
    std::string Label = O.name();
    if (O.result < OutputNames.size())
      Label += fmt::format(" (ONNX output '{}')", OutputNames[O.result]);
    if (!O.tensor.defined()) {
      Lines.push_back(Label + ": none (empty optional, not written)");
      continue;
    }
    std::string File =
        (std::filesystem::path(Dir) / (O.name() + ".npy")).string();
    std::vector<uint8_t> Bytes = npyBytes(O.tensor);
    Files.add(File, Bytes.data(), Bytes.size());
    Lines.push_back(
        fmt::format("{}: {} -> {}", Label, O.tensor.typeString(), File));
  }
  Files.commit();
  return Lines;
}

} // namespace rivet::vm
