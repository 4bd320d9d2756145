//===- Printer.cc - The .rvir text format: printing -----------------------===//
#include "ir/Printer.h"

#include "ir/Op.h"
#include "kernels/Error.h"
#include "kernels/StringTable.h"

#include <cmath>
#include <fmt/format.h>
#include <unordered_map>
#include <unordered_set>

namespace rivet::ir {

namespace {

bool isIdent(std::string_view S) {
  if (S.empty())
    return false;
  auto Start = [](char C) {
    return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_';
  };
  if (!Start(S[0]))
    return false;
  for (char C : S)
    if (!Start(C) && !(C >= '0' && C <= '9'))
      return false;
  return true;
}

/// Shortest decimal text that reads back to the same value, always looking
/// like a float ("1.0", "1e+20", "nan", "-inf").
template <typename F> std::string floatText(F V) {
  if (std::isnan(V))
    return std::signbit(V) ? "-nan" : "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  std::string S = fmt::format("{}", V);
  if (S.find_first_of(".eE") == std::string::npos)
    S += ".0";
  return S;
}

std::string quote(const std::string &S) {
  std::string R = "\"";
  for (char C : S) {
    switch (C) {
    case '"': R += "\\\""; break;
    case '\\': R += "\\\\"; break;
    case '\n': R += "\\n"; break;
    case '\t': R += "\\t"; break;
    case '\r': R += "\\r"; break;
    default:
      if ((unsigned char)C < 0x20 || (unsigned char)C >= 0x7f)
        R += fmt::format("\\x{:02x}", (unsigned char)C);
      else
        R += C;
    }
  }
  return R + "\"";
}

/// Element I of T as text without a suffix (the dtype is printed once).
std::string elementText(const Tensor &T, int64_t I) {
  const void *P = T.rawData();
  switch (T.dtype()) {
  case DType::Bool:
    return static_cast<const uint8_t *>(P)[I] ? "true" : "false";
  case DType::Int8: return std::to_string(static_cast<const int8_t *>(P)[I]);
  case DType::Int16: return std::to_string(static_cast<const int16_t *>(P)[I]);
  case DType::Int32: return std::to_string(static_cast<const int32_t *>(P)[I]);
  case DType::Int64: return std::to_string(static_cast<const int64_t *>(P)[I]);
  case DType::UInt8: return std::to_string(static_cast<const uint8_t *>(P)[I]);
  case DType::Float16: return floatText((float)static_cast<const Half *>(P)[I]);
  case DType::Float32: return floatText(static_cast<const float *>(P)[I]);
  case DType::Float64: return floatText(static_cast<const double *>(P)[I]);
  case DType::UInt16:
    return std::to_string(static_cast<const uint16_t *>(P)[I]);
  case DType::UInt32:
    return std::to_string(static_cast<const uint32_t *>(P)[I]);
  case DType::UInt64:
    return std::to_string(static_cast<const uint64_t *>(P)[I]);
  case DType::BFloat16:
    return floatText((float)static_cast<const BFloat16 *>(P)[I]);
  case DType::String: return quote(std::string(stringElement(T, I)));
  default: break;
  }
  uint8_t B = static_cast<const uint8_t *>(P)[I];
  if (dtypeInfo(T.dtype()).narrowFloat)
    return floatText(narrowToFloat(T.dtype(), B));
  return std::to_string(narrowToInt(T.dtype(), B));
}

std::string shapeText(const Shape &S) {
  std::string R = "(";
  for (size_t I = 0; I < S.size(); ++I) {
    if (I)
      R += ", ";
    R += std::to_string(S[I]);
  }
  if (S.size() == 1)
    R += ",";
  return R + ")";
}

std::string constantText(const Tensor &T, bool ForceConst) {
  if (!T.defined())
    fail("cannot print an undefined tensor constant");
  if (!T.hasData())
    fail("cannot print constant {}: it has no data", T.typeString());
  // Scalars of the computing types print as literals with their suffix;
  // the narrow types have no literal syntax.
  if (T.rank() == 0 && !ForceConst && !isNarrow(T.dtype()) &&
      !isString(T.dtype())) {
    return elementText(T, 0) + std::string(dtypeInfo(T.dtype()).suffix);
  }
  std::string R = fmt::format("const[{}, {}]([", shapeText(T.shape()),
                              dtypeName(T.dtype()));
  for (int64_t I = 0, N = T.numel(); I < N; ++I) {
    if (I)
      R += ", ";
    R += elementText(T, I);
  }
  return R + "])";
}

// Names that cannot be used for a type variable because the parser reads
// them as something else.
bool isReservedTypeName(const std::string &S) {
  return S == "Tensor" || S == "fn" || S == "_";
}

class Printer {
public:
  std::string Out;

  void reset() {
    VarNames.clear();
    UsedNames.clear();
    TypeVarNames.clear();
    UsedTypeNames.clear();
    NextSuffix.clear();
  }

  //===--------------------------------------------------------------------===//
  // Names
  //===--------------------------------------------------------------------===//

  static std::string sanitize(const std::string &Hint, const char *Default) {
    std::string S;
    for (char C : Hint) {
      bool Ok = (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
                (C >= '0' && C <= '9') || C == '_';
      S += Ok ? C : '_';
    }
    return S.empty() ? Default : S;
  }

  // NextSuffix remembers where the search for a free "BaseN" stopped, so
  // naming n variables with the same hint stays linear.
  std::string uniqueName(const std::string &Base,
                         std::unordered_set<std::string> &Used) {
    if (Used.insert(Base).second)
      return Base;
    int &N = NextSuffix[Base];
    while (true) {
      std::string S = Base + std::to_string(++N);
      if (Used.insert(S).second)
        return S;
    }
  }

  const std::string &bindVar(const VarNode *V) {
    auto It = VarNames.find(V);
    if (It != VarNames.end())
      return It->second; // the same Var bound again (a shared subtree)
    return VarNames[V] = uniqueName(sanitize(V->nameHint, "x"), UsedNames);
  }

  const std::string &varName(const VarNode *V) {
    auto It = VarNames.find(V);
    if (It != VarNames.end())
      return It->second;
    return bindVar(V); // a free variable: still give it a distinct name
  }

  void bindTypeVar(const Type &T) {
    if (!T || T->kind != TypeKind::Var || TypeVarNames.count(T.get()))
      return;
    std::string Base = sanitize(T->as<TypeVarNode>()->name, "T");
    if (isReservedTypeName(Base) || !isIdent(Base) ||
        (Base[0] >= '0' && Base[0] <= '9'))
      Base = "T" + Base;
    TypeVarNames[T.get()] = uniqueName(Base, UsedTypeNames);
  }

  //===--------------------------------------------------------------------===//
  // Types
  //===--------------------------------------------------------------------===//

  std::string types(const std::vector<Type> &Ts) {
    std::string S;
    for (size_t I = 0; I < Ts.size(); ++I) {
      if (I)
        S += ", ";
      S += type(Ts[I]);
    }
    return S;
  }

  std::string typeParams(const std::vector<Type> &TPs) {
    if (TPs.empty())
      return "";
    for (auto &TP : TPs)
      bindTypeVar(TP);
    return "[" + types(TPs) + "]";
  }

  std::string type(const Type &T) {
    if (!T)
      return "_";
    switch (T->kind) {
    case TypeKind::Tensor:
      return typeToString(T); // no type variables inside: one spelling
    case TypeKind::Tuple: {
      auto *TT = T->as<TupleTypeNode>();
      if (TT->fields.size() == 1)
        return "(" + type(TT->fields[0]) + ",)";
      return "(" + types(TT->fields) + ")";
    }
    case TypeKind::Func: {
      auto *FT = T->as<FuncTypeNode>();
      std::string TP = typeParams(FT->typeParams);
      return fmt::format("fn{}({}) -> {}", TP, types(FT->params),
                         type(FT->ret));
    }
    case TypeKind::Var: {
      auto It = TypeVarNames.find(T.get());
      return It != TypeVarNames.end() ? It->second : T->as<TypeVarNode>()->name;
    }
    case TypeKind::Call: {
      auto *TC = T->as<TypeCallNode>();
      if (TC->args.empty())
        return TC->adt;
      return TC->adt + "[" + types(TC->args) + "]";
    }
    case TypeKind::Incomplete: return "_";
    }
    return "_";
  }

  //===--------------------------------------------------------------------===//
  // Expressions
  //===--------------------------------------------------------------------===//

  void indent(int Ind) { Out.append((size_t)Ind * 2, ' '); }

  void attrList(const Attrs &A, bool &First) {
    for (auto &[Name, V] : A.items()) {
      if (!First)
        Out += ", ";
      First = false;
      Out += isIdent(Name) ? Name : quote(Name);
      Out += "=";
      Out += printAttrValue(V);
    }
  }

  void binder(const Var &V) {
    Out += "%";
    Out += bindVar(V.get());
    if (V->typeAnnotation) {
      Out += ": ";
      Out += type(V->typeAnnotation);
    }
  }

  /// Prints E where a postfix operator (call, .N) follows it.
  void postfixOperand(const Expr &E, int Ind) {
    switch (E->kind) {
    case ExprKind::Var:
    case ExprKind::GlobalVar:
    case ExprKind::Op:
    case ExprKind::Call:
    case ExprKind::Tuple:
    case ExprKind::TupleGetItem: expr(E, Ind); return;
    case ExprKind::Constant:
      // "1" ".0" would lex as the float "1.0"; a space keeps them apart.
      expr(E, Ind);
      Out += " ";
      return;
    case ExprKind::Constructor:
      // A bare nullary constructor reads back as a call; keep the value.
      expr(E, Ind);
      return;
    default:
      Out += "(";
      expr(E, Ind);
      Out += ")";
    }
  }

  /// { let ...; let ...; body } with the lets flat.
  void block(const Expr &E, int Ind) {
    Out += "{\n";
    blockContents(E, Ind + 1);
    indent(Ind);
    Out += "}";
  }

  void blockContents(const Expr &E, int Ind) {
    Expr Cur = E;
    while (Cur && Cur->kind == ExprKind::Let) {
      auto *L = Cur->as<LetNode>();
      indent(Ind);
      Out += "let ";
      binder(L->var);
      Out += " = ";
      expr(L->value, Ind);
      Out += ";\n";
      Cur = L->body;
    }
    indent(Ind);
    expr(Cur, Ind);
    Out += "\n";
  }

  void pattern(const Pattern &P) {
    if (!P) {
      Out += "_";
      return;
    }
    switch (P->kind) {
    case PatternKind::Wildcard: Out += "_"; return;
    case PatternKind::Var: binder(P->var); return;
    case PatternKind::Constructor:
      Out += P->ctor ? P->ctor->name : "<null>";
      if (P->children.empty())
        return;
      [[fallthrough]];
    case PatternKind::Tuple:
      Out += "(";
      for (size_t I = 0; I < P->children.size(); ++I) {
        if (I)
          Out += ", ";
        pattern(P->children[I]);
      }
      if (P->kind == PatternKind::Tuple && P->children.size() == 1)
        Out += ",";
      Out += ")";
      return;
    }
  }

  void exprList(const std::vector<Expr> &Es, int Ind) {
    for (size_t I = 0; I < Es.size(); ++I) {
      if (I)
        Out += ", ";
      expr(Es[I], Ind);
    }
  }

  /// Head is "fn" or "def @name"; a literal has a space before its "(".
  void function(const FunctionNode &F, int Ind, const std::string &Head,
                bool IsLiteral) {
    Out += Head;
    Out += typeParams(F.typeParams);
    Out += IsLiteral ? " (" : "(";
    for (size_t I = 0; I < F.params.size(); ++I) {
      if (I)
        Out += ", ";
      binder(F.params[I]);
    }
    bool First = F.params.empty();
    attrList(F.attrs, First);
    Out += ") ";
    if (F.retType) {
      Out += "-> ";
      Out += type(F.retType);
      Out += " ";
    }
    block(F.body, Ind);
  }

  void expr(const Expr &E, int Ind) {
    if (!E)
      fail("cannot print a null expression");
    switch (E->kind) {
    case ExprKind::Var: Out += "%" + varName(E->as<VarNode>()); return;
    case ExprKind::GlobalVar: Out += "@" + E->as<GlobalVarNode>()->name; return;
    case ExprKind::Constant:
      Out += constantText(E->as<ConstantNode>()->value, false);
      return;
    case ExprKind::Op: {
      auto *O = E->as<OpNode>();
      if (!O->info)
        fail("cannot print an operator node without registry entry");
      Out += O->name();
      return;
    }
    case ExprKind::Constructor: Out += E->as<ConstructorNode>()->name; return;
    case ExprKind::Call: {
      auto *C = E->as<CallNode>();
      if (!C->callee)
        fail("cannot print a call with a null callee");
      if (C->callee->kind == ExprKind::Constructor && C->args.empty() &&
          C->attrs.empty() &&
          C->callee->as<ConstructorNode>()->inputs.empty()) {
        Out += C->callee->as<ConstructorNode>()->name; // bare nullary ctor
        return;
      }
      if (C->callee->kind == ExprKind::Constructor)
        Out += C->callee->as<ConstructorNode>()->name;
      else
        postfixOperand(C->callee, Ind);
      Out += "(";
      exprList(C->args, Ind);
      bool First = C->args.empty();
      attrList(C->attrs, First);
      Out += ")";
      return;
    }
    case ExprKind::Function:
      function(*E->as<FunctionNode>(), Ind, "fn", true);
      return;
    case ExprKind::Let: block(E, Ind); return;
    case ExprKind::If: {
      auto *I = E->as<IfNode>();
      Out += "if (";
      expr(I->cond, Ind);
      Out += ") ";
      block(I->thenBranch, Ind);
      Out += " else ";
      block(I->elseBranch, Ind);
      return;
    }
    case ExprKind::Tuple: {
      auto *T = E->as<TupleNode>();
      Out += "(";
      exprList(T->fields, Ind);
      if (T->fields.size() == 1)
        Out += ",";
      Out += ")";
      return;
    }
    case ExprKind::TupleGetItem: {
      auto *T = E->as<TupleGetItemNode>();
      postfixOperand(T->tuple, Ind);
      Out += "." + std::to_string(T->index);
      return;
    }
    case ExprKind::Match: {
      auto *M = E->as<MatchNode>();
      Out += "match (";
      expr(M->data, Ind);
      Out += ") {\n";
      for (const Clause &C : M->clauses) {
        indent(Ind + 1);
        pattern(C.lhs);
        Out += " => ";
        expr(C.rhs, Ind + 1);
        Out += ",\n";
      }
      indent(Ind);
      Out += "}";
      return;
    }
    }
  }

  //===--------------------------------------------------------------------===//
  // Module
  //===--------------------------------------------------------------------===//

  void typeData(const TypeData &TD) {
    reset();
    Out += "type " + TD.name + typeParams(TD.typeParams) + " {\n";
    for (const Constructor &C : TD.constructors) {
      indent(1);
      Out += C->name;
      if (!C->inputs.empty())
        Out += "(" + types(C->inputs) + ")";
      Out += ",\n";
    }
    Out += "}\n";
  }

  void globalFunction(const std::string &Name, const Expr &Fn) {
    reset();
    auto *F = Fn->as<FunctionNode>();
    if (!F)
      fail("global '@{}' is not a function", Name);
    function(*F, 0, "def @" + Name, false);
    Out += "\n";
  }

private:
  std::unordered_map<const VarNode *, std::string> VarNames;
  std::unordered_set<std::string> UsedNames;
  std::unordered_map<const TypeNode *, std::string> TypeVarNames;
  std::unordered_set<std::string> UsedTypeNames;
  std::unordered_map<std::string, int> NextSuffix;
};

} // namespace

bool isPreludeName(const std::string &Name) {
  // Whatever the prelude defines, so the two never drift apart.
  static const std::unordered_set<std::string> Names = [] {
    Module P = Module::withPrelude();
    std::unordered_set<std::string> S(P.functionNames().begin(),
                                      P.functionNames().end());
    S.insert(P.typeDataNames().begin(), P.typeDataNames().end());
    return S;
  }();
  return Names.count(Name) != 0;
}

std::string printModule(const Module &M, const PrintOptions &Opts) {
  Printer P;
  bool First = true;
  for (const std::string &N : M.typeDataNames()) {
    if (!Opts.includePrelude && isPreludeName(N))
      continue;
    if (!First)
      P.Out += "\n";
    First = false;
    P.typeData(M.typeData(N));
  }
  for (const std::string &N : M.functionNames()) {
    if (!Opts.includePrelude && isPreludeName(N))
      continue;
    if (!First)
      P.Out += "\n";
    First = false;
    P.globalFunction(N, M.function(N));
  }
  return P.Out;
}

std::string printExpr(const Expr &E) {
  Printer P;
  if (E && E->kind == ExprKind::Let)
    P.blockContents(E, 0);
  else
    P.expr(E, 0);
  // A let chain ends with a newline; a single expression does not.
  if (!P.Out.empty() && P.Out.back() == '\n')
    P.Out.pop_back();
  return P.Out;
}

std::string printAttrValue(const AttrValue &V) {
  return std::visit(
      [](const auto &X) -> std::string {
        using T = std::decay_t<decltype(X)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(X);
        } else if constexpr (std::is_same_v<T, double>) {
          return floatText(X);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(X);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string S = "[";
          for (size_t I = 0; I < X.size(); ++I)
            S += (I ? ", " : "") + std::to_string(X[I]);
          return S + "]";
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          if (X.empty())
            return "floats[]";
          std::string S = "[";
          for (size_t I = 0; I < X.size(); ++I)
            S += (I ? ", " : "") + floatText(X[I]);
          return S + "]";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          if (X.empty())
            return "strings[]";
          std::string S = "[";
          for (size_t I = 0; I < X.size(); ++I)
            S += (I ? ", " : "") + quote(X[I]);
          return S + "]";
        } else {
          return constantText(X, true);
        }
      },
      V);
}

std::string printConstant(const Tensor &T) { return constantText(T, false); }

} // namespace rivet::ir
