//===- SpecializeInputs.cc - @main for inputs of known shapes -------------===//
#include "vm/compiler/SpecializeInputs.h"

#include "ir/Visitor.h"
#include "kernels/Error.h"

#include <fmt/format.h>

#include <unordered_map>

namespace rivet::vm::compiler {

namespace {

std::string dimsText(const std::vector<int64_t> &Dims) {
  return Dims.empty() ? "a scalar" : fmt::format("{}", fmt::join(Dims, "x"));
}

/// T (a parameter's declared type) with the extents Dims; Name and Dims for
/// the error messages.
ir::Type specialize(const ir::Type &T, const std::string &Name,
                    const std::vector<int64_t> &Dims) {
  const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
  if (!TT)
    fail("input shape for '{}': the input is not a tensor", Name);
  if (TT->shape) {
    const std::vector<ir::Dim> &Declared = *TT->shape;
    if (Declared.size() != Dims.size())
      fail("input shape for '{}': {} has rank {}, the input is declared {}",
           Name, dimsText(Dims), Dims.size(), ir::typeToString(T));
    for (size_t I = 0; I < Dims.size(); ++I)
      if (Declared[I].isConst() && Declared[I].value != Dims[I])
        fail("input shape for '{}': {} gives extent {} to axis {}, the input "
             "is declared {}",
             Name, dimsText(Dims), Dims[I], I, ir::typeToString(T));
  }
  std::vector<ir::Dim> Shape;
  for (int64_t D : Dims) {
    if (D < 0)
      fail("input shape for '{}': extent {} is negative", Name, D);
    Shape.push_back(ir::Dim::constant(D));
  }
  return ir::tensorType(std::move(Shape), TT->dtype);
}

} // namespace

ir::Module specializeInputShapes(
    const ir::Module &M,
    const std::map<std::string, std::vector<int64_t>> &Shapes) {
  if (Shapes.empty())
    return M;
  if (!M.hasFunction("main"))
    fail("input shapes given, but the module has no @main");
  const auto *Main = M.function("main")->as<ir::FunctionNode>();
  std::vector<std::string> Names;
  if (Main->attrs.has("input_names"))
    Names = Main->attrs.getStrings("input_names");
  auto InputName = [&](size_t I) {
    return I < Names.size() ? Names[I] : Main->params[I]->nameHint;
  };
  std::string Known;
  for (size_t I = 0; I < Main->params.size(); ++I)
    Known += (I ? ", " : "") + InputName(I);
  for (const auto &[Name, Dims] : Shapes) {
    bool Found = false;
    for (size_t I = 0; I < Main->params.size(); ++I)
      Found |= InputName(I) == Name;
    if (!Found)
      fail("input shape for '{}': @main has no such input (its inputs: {})",
           Name, Known.empty() ? "none" : Known);
  }
  std::vector<ir::Var> Params;
  std::unordered_map<const ir::VarNode *, ir::Expr> Rename;
  for (size_t I = 0; I < Main->params.size(); ++I) {
    const ir::Var &P = Main->params[I];
    auto It = Shapes.find(InputName(I));
    if (It == Shapes.end()) {
      Params.push_back(P);
      continue;
    }
    ir::Type Declared = P->typeAnnotation ? P->typeAnnotation : P->checkedType;
    Params.push_back(
        ir::var(P->nameHint, specialize(Declared, It->first, It->second)));
    Rename[P.get()] = Params.back();
  }
  // The return type is inferred again: it may name the symbols the inputs
  // no longer have.
  ir::Expr NewMain =
      ir::function(std::move(Params), ir::substitute(Main->body, Rename),
                   nullptr, Main->typeParams, Main->attrs);
  ir::Module R = M;
  R.addFunction("main", NewMain);
  return R;
}

} // namespace rivet::vm::compiler
