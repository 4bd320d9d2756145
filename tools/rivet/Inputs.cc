//===- Inputs.cc - Program inputs and outputs for the rivet CLI -----------===//
#include "Inputs.h"

#include "frontend/onnx/Importer.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"
#include "kernels/Npy.h"
#include "kernels/Random.h"
#include "kernels/RegularFile.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rivet::cli {

using namespace rivet::ir;

bool isOnnxPath(const std::string &Path) {
  std::string Ext = std::filesystem::path(Path).extension().string();
  std::transform(Ext.begin(), Ext.end(), Ext.begin(),
                 [](unsigned char C) { return std::tolower(C); });
  return Ext == ".onnx";
}

static Module parseRvirFile(const std::string &Path) {
  std::vector<uint8_t> Bytes = readRegularFile(Path);
  return parseModule(std::string(Bytes.begin(), Bytes.end()), Path);
}

LoadedModel loadModel(const std::string &Path) {
  LoadedModel L;
  L.isOnnx = isOnnxPath(Path);
  L.module = L.isOnnx ? frontend::importOnnxFile(Path) : parseRvirFile(Path);
  if (!L.module.hasFunction("main"))
    fail("{}: the program has no @main function", Path);
  try {
    inferTypes(L.module);
  } catch (const Error &E) {
    // The text parser's errors name the file; say which model an imported
    // graph that fails to type-check came from.
    if (!L.isOnnx)
      throw;
    fail("{}: the imported model does not type-check: {}", Path, E.what());
  }
  const auto *Main = L.module.function("main")->as<FunctionNode>();
  if (!Main)
    fail("{}: @main is not a function", Path);
  for (const Var &P : Main->params)
    L.inputNames.push_back(P->nameHint);
  if (L.isOnnx) {
    frontend::OnnxSignature Sig = frontend::onnxSignature(L.module);
    // The IR parameters carry sanitized names; the user knows the ONNX ones.
    if (Sig.inputs.size() == Main->params.size())
      L.inputNames = Sig.inputs;
    L.outputNames = Sig.outputs;
  }
  return L;
}

Module loadModule(const std::string &Path) { return loadModel(Path).module; }

Shape parseShapeSpec(const std::string &Text, const std::string &Name) {
  Shape S;
  if (Text.empty() || Text == "()" || Text == "scalar")
    return S;
  size_t Pos = 0;
  while (true) {
    size_t X = Text.find('x', Pos);
    std::string Part =
        Text.substr(Pos, X == std::string::npos ? std::string::npos : X - Pos);
    if (Part.empty() || Part.size() > 12 ||
        Part.find_first_not_of("0123456789") != std::string::npos)
      fail("--shape {}: expected extents like 2x3, got '{}'", Name, Text);
    S.push_back(std::stoll(Part));
    if (X == std::string::npos)
      break;
    Pos = X + 1;
  }
  return S;
}

Type paramType(const VarNode &Param) {
  if (Param.checkedType && Param.checkedType->kind != TypeKind::Incomplete)
    return Param.checkedType;
  return Param.typeAnnotation;
}

namespace {

/// Checks one input against its declared tensor type; binds symbolic dims.
class InputChecker {
public:
  void check(const std::string &Name, const Shape &Sh, DType Dt,
             const TensorTypeNode &Declared) {
    std::string Expected = typeToString(
        std::make_shared<TensorTypeNode>(Declared.shape, Declared.dtype));
    std::string Given = Tensor::meta(Sh, Dt).typeString();
    if (Dt != Declared.dtype)
      fail("input '{}': expected {}, got {} (dtype {} instead of {})", Name,
           Expected, Given, dtypeName(Dt), dtypeName(Declared.dtype));
    if (!Declared.shape)
      return;
    const auto &Dims = *Declared.shape;
    if (Dims.size() != Sh.size())
      fail("input '{}': expected {}, got {} (rank {} instead of {})", Name,
           Expected, Given, Sh.size(), Dims.size());
    for (size_t I = 0; I < Dims.size(); ++I) {
      const Dim &D = Dims[I];
      if (D.isConst() && D.value != Sh[I])
        fail("input '{}': expected {}, got {} (dimension {} is {} instead of "
             "{})",
             Name, Expected, Given, I, Sh[I], D.value);
      if (D.isSymbol()) {
        auto [It, New] = Symbols.emplace(D.name, std::make_pair(Sh[I], Name));
        if (!New && It->second.first != Sh[I])
          fail("input '{}': expected {}, got {} (dimension {} is {} but "
               "input '{}' has {} = {})",
               Name, Expected, Given, D.name, Sh[I], It->second.second, D.name,
               It->second.first);
      }
    }
  }

  /// The shape of a generated input: constants, bound symbols, or --shape.
  Shape shapeFor(const std::string &Name, const TensorTypeNode &Declared,
                 const InputOptions &Opts) {
    if (auto It = Opts.shapes.find(Name); It != Opts.shapes.end())
      return It->second;
    std::string Type = typeToString(
        std::make_shared<TensorTypeNode>(Declared.shape, Declared.dtype));
    if (!Declared.shape)
      fail("input '{}' has type {} of unknown rank: give its shape with "
           "--shape {}=AxB",
           Name, Type, Name);
    Shape S;
    for (const Dim &D : *Declared.shape) {
      if (D.isConst()) {
        S.push_back(D.value);
        continue;
      }
      if (D.isSymbol())
        if (auto It = Symbols.find(D.name); It != Symbols.end()) {
          S.push_back(It->second.first);
          continue;
        }
      fail("input '{}' has type {} with dynamic dimension '{}': give its "
           "shape with --shape {}=AxB",
           Name, Type, D.str(), Name);
    }
    return S;
  }

private:
  std::map<std::string, std::pair<int64_t, std::string>> Symbols;
};

std::string joinNames(const std::vector<std::string> &Names) {
  std::string S;
  for (const std::string &N : Names)
    S += (S.empty() ? "" : ", ") + N;
  return S.empty() ? "none" : S;
}

} // namespace

std::vector<Tensor> prepareInputs(const FunctionNode &Main,
                                  const InputOptions &Opts,
                                  const std::vector<std::string> &GivenNames) {
  std::vector<std::string> Names = GivenNames;
  if (Names.size() != Main.params.size()) {
    Names.clear();
    for (const Var &P : Main.params)
      Names.push_back(P->nameHint);
  }
  auto IsInput = [&](const std::string &Name) {
    return std::find(Names.begin(), Names.end(), Name) != Names.end();
  };
  for (const auto &[Name, _] : Opts.files)
    if (!IsInput(Name))
      fail("unknown input '{}': @main has inputs: {}", Name, joinNames(Names));
  for (const auto &[Name, _] : Opts.shapes)
    if (!IsInput(Name))
      fail("--shape for unknown input '{}': @main has inputs: {}", Name,
           joinNames(Names));

  InputChecker Checker;
  std::vector<Tensor> Args(Main.params.size());
  std::vector<size_t> ToGenerate;
  // Files first, so that their symbolic dims are bound before generating.
  for (size_t I = 0; I < Main.params.size(); ++I) {
    const VarNode &P = *Main.params[I];
    const std::string &Name = Names[I];
    Type T = paramType(P);
    const auto *TT = T ? T->as<TensorTypeNode>() : nullptr;
    if (!TT)
      fail("input '{}' has type {}: only tensor inputs can be given on the "
           "command line",
           Name, typeToString(T));
    auto It = Opts.files.find(Name);
    if (It == Opts.files.end()) {
      if (!Opts.random)
        fail("missing input '{}' of type {} (give --input {}=FILE.npy or "
             "--random-inputs)",
             Name, typeToString(T), Name);
      ToGenerate.push_back(I);
      continue;
    }
    Tensor V = readNpy(It->second);
    Checker.check(Name, V.shape(), V.dtype(), *TT);
    Args[I] = std::move(V);
  }
  for (size_t I : ToGenerate) {
    const VarNode &P = *Main.params[I];
    const auto *TT = paramType(P)->as<TensorTypeNode>();
    Shape S = Checker.shapeFor(Names[I], *TT, Opts);
    Checker.check(Names[I], S, TT->dtype, *TT);
    Args[I] = randomTensor(S, TT->dtype, Opts.seed * 1000003 + I);
  }
  return Args;
}

static void flattenInto(const Value &V, std::vector<NamedOutput> &Out,
                        size_t &Index, size_t Result) {
  if (V.isTensor()) {
    Out.push_back({Index++, std::nullopt, V.tensor(), Result});
    return;
  }
  if (V.isTuple()) {
    for (const Value &F : V.fields())
      flattenInto(F, Out, Index, Result);
    return;
  }
  if (V.isADT() && V.ctor()->adt == "Option") {
    // An ONNX optional: Some(x) is written like x; None keeps its index
    // (an undefined tensor, not written) so later outputs keep their numbers.
    if (!V.fields().empty())
      flattenInto(V.fields()[0], Out, Index, Result);
    else
      Out.push_back({Index++, std::nullopt, Tensor(), Result});
    return;
  }
  if (V.isADT() && V.ctor()->adt == "List") {
    size_t J = 0;
    Value Cur = V;
    while (Cur.isADT() && !Cur.fields().empty()) {
      if (Cur.fields().size() != 2 || !Cur.fields()[0].isTensor())
        fail("output {}: a List whose elements are not tensors ({}) cannot be "
             "written as .npy files",
             Index, valueToString(V));
      Out.push_back({Index, J++, Cur.fields()[0].tensor(), Result});
      Value Next = Cur.fields()[1];
      Cur = std::move(Next);
    }
    ++Index;
    return;
  }
  fail("output {} is {}, which cannot be written as .npy (only tensors, "
       "tuples, Options and Lists of tensors can)",
       Index, valueToString(V));
}

std::vector<NamedOutput> flattenOutputs(const Value &Result,
                                        size_t NumResults) {
  std::vector<NamedOutput> Out;
  size_t Index = 0;
  if (NumResults > 1 && Result.isTuple() &&
      Result.fields().size() == NumResults) {
    for (size_t R = 0; R < NumResults; ++R)
      flattenInto(Result.fields()[R], Out, Index, R);
    return Out;
  }
  flattenInto(Result, Out, Index, 0);
  return Out;
}

namespace {
struct ThreadTask {
  const std::function<void()> *Fn;
  std::exception_ptr Err;
};
void *threadMain(void *P) {
  auto *T = static_cast<ThreadTask *>(P);
  try {
    (*T->Fn)();
  } catch (...) {
    T->Err = std::current_exception();
  }
  return nullptr;
}
} // namespace

void runWithStack(size_t StackBytes, const std::function<void()> &Fn) {
  ThreadTask Task{&Fn, nullptr};
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  pthread_t Thread;
  bool Started = pthread_attr_setstacksize(&Attr, StackBytes) == 0 &&
                 pthread_create(&Thread, &Attr, threadMain, &Task) == 0;
  pthread_attr_destroy(&Attr);
  if (!Started) {
    Fn(); // no big thread available: run here, the stack guard still applies
    return;
  }
  pthread_join(Thread, nullptr);
  if (Task.Err)
    std::rethrow_exception(Task.Err);
}

} // namespace rivet::cli
