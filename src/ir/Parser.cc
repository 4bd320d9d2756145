//===- Parser.cc - The .rvir text format: parsing -------------------------===//
//
// Two passes over the tokens: the first parses every top-level `type`
// definition, so constructors are known before any function body is read;
// the second parses the `def`s. References to global functions and ADT names
// are checked once everything is defined.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"

#include "ir/Lexer.h"
#include "ir/Op.h"
#include "ir/Origin.h"
#include "kernels/Error.h"
#include "kernels/StringTable.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>

namespace rivet::ir {

namespace {

/// Words the grammar gives a meaning; they cannot name types, type
/// parameters or constructors.
bool isReserved(const std::string &S) {
  static const std::set<std::string> Words = {
      "def",   "type",  "fn",   "let",   "if",     "else",
      "match", "const", "true", "false", "Tensor", "_"};
  return Words.count(S) != 0;
}

template <typename E> void store(Tensor &T, int64_t I, E V) {
  static_cast<E *>(T.rawData())[I] = V;
}

class Parser {
public:
  Parser(std::string_view Text, std::string_view FileName)
      : FileName(FileName), Toks(tokenize(Text, FileName)) {}

  Module parseModule(bool ImportPrelude);
  Expr parseStandaloneExpr(const Module &Context);
  Type parseStandaloneType(const Module &Context);

private:
  //===--------------------------------------------------------------------===//
  // Token helpers
  //===--------------------------------------------------------------------===//

  const Token &cur() const { return Toks[Idx]; }
  const Token &peekTok(size_t Ahead = 1) const {
    return Toks[std::min(Idx + Ahead, Toks.size() - 1)];
  }
  bool is(TokKind K) const { return cur().kind == K; }
  bool isIdent(std::string_view S) const {
    return cur().kind == TokKind::Ident && cur().text == S;
  }
  const Token &advance() {
    const Token &T = Toks[Idx];
    if (Idx + 1 < Toks.size())
      ++Idx;
    return T;
  }
  bool accept(TokKind K) {
    if (!is(K))
      return false;
    advance();
    return true;
  }
  [[noreturn]] void error(const Token &T, const std::string &Msg) const {
    fail("{}:{}:{}: {}", FileName, T.line, T.col, Msg);
  }
  /// Consumes a token of kind K or fails with "expected <What>, found <tok>".
  const Token &expect(TokKind K, std::string_view What) {
    if (!is(K))
      error(cur(),
            fmt::format("expected {}, found {}", What, describeToken(cur())));
    return advance();
  }
  void expectIdent(std::string_view Kw, std::string_view What) {
    if (!isIdent(Kw))
      error(cur(),
            fmt::format("expected {}, found {}", What, describeToken(cur())));
    advance();
  }

  struct DepthGuard {
    Parser &P;
    DepthGuard(Parser &P) : P(P) {
      if (++P.Depth > kMaxParseNesting)
        P.error(P.cur(), fmt::format("nesting too deep (more than {} levels)",
                                     kMaxParseNesting));
    }
    ~DepthGuard() { --P.Depth; }
  };

  //===--------------------------------------------------------------------===//
  // Scopes
  //===--------------------------------------------------------------------===//

  void pushVar(const std::string &Name, const Var &V) {
    Vars[Name].push_back(V);
    VarLog.push_back(Name);
  }
  void popVarsTo(size_t Mark) {
    while (VarLog.size() > Mark) {
      auto It = Vars.find(VarLog.back());
      It->second.pop_back();
      if (It->second.empty())
        Vars.erase(It);
      VarLog.pop_back();
    }
  }
  Var lookupVar(const std::string &Name) const {
    auto It = Vars.find(Name);
    return It == Vars.end() ? nullptr : It->second.back();
  }
  Type lookupTypeVar(const std::string &Name) const {
    for (size_t I = TypeVars.size(); I-- > 0;)
      if (TypeVars[I].first == Name)
        return TypeVars[I].second;
    return nullptr;
  }

  //===--------------------------------------------------------------------===//
  // Grammar
  //===--------------------------------------------------------------------===//

  void collectTypeDefs();
  TypeData parseTypeDef();
  void parseDef();
  std::vector<Type> parseTypeParams();
  void parseParams(std::vector<Var> &Params, Attrs &A);
  Type parseType();
  std::vector<Dim> parseDims();
  Expr parseExpr();
  Expr parseLetsOrPostfix();
  Expr parsePostfix();
  Expr parsePrimary();
  Expr parseIdentExpr();
  Expr parseBlock();
  Expr parseFunction();
  Expr parseIf();
  Expr parseMatch();
  Pattern parsePattern();
  void parseCallArgs(std::vector<Expr> &Args, Attrs &A);
  void parseAttr(Attrs &A);
  AttrValue parseAttrValue();
  Tensor parseTensorConst();
  Expr parseScalarLiteral();
  void
  checkReferences(const std::function<bool(const std::string &)> &HasGlobal);

  std::string FileName;
  std::vector<Token> Toks;
  size_t Idx = 0;
  int Depth = 0;

  std::unordered_map<std::string, std::vector<Var>> Vars;
  std::vector<std::string> VarLog;
  std::vector<std::pair<std::string, Type>> TypeVars;

  // Definitions.
  std::unordered_map<std::string, Constructor> Ctors;
  std::unordered_map<std::string, const TypeData *> Adts; // by name
  std::vector<TypeData> UserTypes;
  std::vector<std::pair<size_t, size_t>> TypeDefSpans; // [begin, end) tokens
  std::vector<std::pair<std::string, Expr>> UserFns;
  std::set<std::string> UserFnNames;
  // References checked at the end: name and where.
  std::vector<std::pair<std::string, Token>> GlobalRefs;
  struct AdtRef {
    std::string Name;
    size_t NumArgs;
    Token Where;
  };
  std::vector<AdtRef> AdtRefs;
};

//===----------------------------------------------------------------------===//
// Module structure
//===----------------------------------------------------------------------===//

void Parser::collectTypeDefs() {
  int Nest = 0;
  for (size_t I = 0; I < Toks.size(); ++I) {
    const Token &T = Toks[I];
    switch (T.kind) {
    case TokKind::LParen:
    case TokKind::LBracket:
    case TokKind::LBrace: ++Nest; break;
    case TokKind::RParen:
    case TokKind::RBracket:
    case TokKind::RBrace: --Nest; break;
    default: break;
    }
    if (Nest == 0 && T.kind == TokKind::Ident && T.text == "type") {
      Idx = I;
      UserTypes.push_back(parseTypeDef());
      TypeDefSpans.push_back({I, Idx});
      I = Idx - 1;
    }
  }
}

TypeData Parser::parseTypeDef() {
  expectIdent("type", "'type'");
  const Token &NameTok = expect(TokKind::Ident, "a type name after 'type'");
  if (isReserved(NameTok.text))
    error(NameTok,
          fmt::format("'{}' cannot be used as a type name", NameTok.text));
  for (const TypeData &TD : UserTypes)
    if (TD.name == NameTok.text)
      error(NameTok,
            fmt::format("duplicate definition of type '{}'", NameTok.text));
  TypeData TD;
  TD.name = NameTok.text;
  size_t TypeMark = TypeVars.size();
  TD.typeParams = parseTypeParams();
  expect(TokKind::LBrace, "'{' after the type name");
  while (!is(TokKind::RBrace)) {
    const Token &CTok = expect(TokKind::Ident, "a constructor name");
    if (isReserved(CTok.text))
      error(CTok, fmt::format("'{}' cannot be used as a constructor name",
                              CTok.text));
    for (const Constructor &C : TD.constructors)
      if (C->name == CTok.text)
        error(CTok, fmt::format("duplicate constructor '{}'", CTok.text));
    for (const TypeData &Other : UserTypes)
      for (const Constructor &C : Other.constructors)
        if (C->name == CTok.text)
          error(CTok,
                fmt::format("duplicate constructor '{}' (also in type '{}')",
                            CTok.text, Other.name));
    std::vector<Type> Inputs;
    if (accept(TokKind::LParen)) {
      while (!is(TokKind::RParen)) {
        Inputs.push_back(parseType());
        if (!accept(TokKind::Comma))
          break;
      }
      expect(TokKind::RParen, "')' after constructor fields");
    }
    TD.constructors.push_back(std::make_shared<ConstructorNode>(
        CTok.text, TD.name, (int64_t)TD.constructors.size(),
        std::move(Inputs)));
    if (!accept(TokKind::Comma))
      break;
  }
  expect(TokKind::RBrace, "'}' after constructors");
  TypeVars.resize(TypeMark);
  return TD;
}

std::vector<Type> Parser::parseTypeParams() {
  std::vector<Type> TPs;
  if (!accept(TokKind::LBracket))
    return TPs;
  while (!is(TokKind::RBracket)) {
    const Token &T = expect(TokKind::Ident, "a type parameter name");
    if (isReserved(T.text))
      error(T, fmt::format("'{}' cannot be used as a type parameter", T.text));
    Type TV = typeVar(T.text);
    TPs.push_back(TV);
    TypeVars.push_back({T.text, TV});
    if (!accept(TokKind::Comma))
      break;
  }
  expect(TokKind::RBracket, "']' after type parameters");
  return TPs;
}

void Parser::parseParams(std::vector<Var> &Params, Attrs &A) {
  expect(TokKind::LParen, "'(' before parameters");
  while (!is(TokKind::RParen)) {
    if ((is(TokKind::Ident) || is(TokKind::String)) &&
        peekTok().kind == TokKind::Equal) {
      parseAttr(A);
    } else {
      if (!A.empty())
        error(cur(), "parameter after attributes");
      const Token &PT = expect(TokKind::LocalName, "a parameter name");
      Type Ann;
      if (accept(TokKind::Colon))
        Ann = parseType();
      Var V = var(PT.text, Ann);
      Params.push_back(V);
      pushVar(PT.text, V);
    }
    if (!accept(TokKind::Comma))
      break;
  }
  expect(TokKind::RParen, "')' after parameters");
}

void Parser::parseDef() {
  expectIdent("def", "'def'");
  const Token &NameTok =
      expect(TokKind::GlobalName, "a global name after 'def'");
  if (!UserFnNames.insert(NameTok.text).second)
    error(NameTok, fmt::format("duplicate definition of '@{}'", NameTok.text));
  size_t VarMark = VarLog.size(), TypeMark = TypeVars.size();
  std::vector<Type> TPs = parseTypeParams();
  std::vector<Var> Params;
  Attrs A;
  parseParams(Params, A);
  Type Ret;
  if (accept(TokKind::Arrow))
    Ret = parseType();
  if (!is(TokKind::LBrace))
    error(cur(), fmt::format("expected '{{' before the body of '@{}', found {}",
                             NameTok.text, describeToken(cur())));
  Expr Body = parseBlock();
  popVarsTo(VarMark);
  TypeVars.resize(TypeMark);
  UserFns.push_back(
      {NameTok.text, function(std::move(Params), std::move(Body),
                              std::move(Ret), std::move(TPs), std::move(A))});
}

void Parser::checkReferences(
    const std::function<bool(const std::string &)> &HasGlobal) {
  for (auto &[Name, Where] : GlobalRefs)
    if (!HasGlobal(Name))
      error(Where, fmt::format("undefined global function '@{}'", Name));
  for (const AdtRef &R : AdtRefs) {
    auto It = Adts.find(R.Name);
    if (It == Adts.end())
      error(R.Where, fmt::format("unknown type '{}'", R.Name));
    size_t Want = It->second->typeParams.size();
    if (Want != R.NumArgs)
      error(R.Where,
            fmt::format("type '{}' expects {} type argument{}, got {}", R.Name,
                        Want, Want == 1 ? "" : "s", R.NumArgs));
  }
}

Module Parser::parseModule(bool ImportPrelude) {
  collectTypeDefs();
  Module Prelude;
  if (ImportPrelude)
    Prelude = Module::withPrelude();
  std::set<std::string> UserTypeNames;
  for (const TypeData &TD : UserTypes) {
    UserTypeNames.insert(TD.name);
    Adts[TD.name] = &TD;
    for (const Constructor &C : TD.constructors)
      Ctors[C->name] = C;
  }
  // Prelude types that the text does not redefine.
  std::vector<const TypeData *> PreludeTypes;
  for (const std::string &N : Prelude.typeDataNames()) {
    if (UserTypeNames.count(N))
      continue;
    const TypeData &TD = Prelude.typeData(N);
    PreludeTypes.push_back(&TD);
    Adts[N] = &TD;
    for (const Constructor &C : TD.constructors) {
      auto It = Ctors.find(C->name);
      if (It != Ctors.end()) {
        for (size_t I = 0; I < UserTypes.size(); ++I)
          for (const Constructor &UC : UserTypes[I].constructors)
            if (UC->name == C->name)
              error(Toks[TypeDefSpans[I].first],
                    fmt::format("constructor '{}' of type '{}' is already "
                                "defined by the prelude type '{}'",
                                C->name, UserTypes[I].name, N));
      }
      Ctors[C->name] = C;
    }
  }

  Idx = 0;
  size_t NextSpan = 0;
  while (!is(TokKind::Eof)) {
    if (NextSpan < TypeDefSpans.size() && Idx == TypeDefSpans[NextSpan].first) {
      Idx = TypeDefSpans[NextSpan++].second;
      continue;
    }
    if (isIdent("def")) {
      parseDef();
      continue;
    }
    error(cur(), fmt::format("expected 'def' or 'type' at top level, found {}",
                             describeToken(cur())));
  }

  checkReferences([&](const std::string &N) {
    return UserFnNames.count(N) || (ImportPrelude && Prelude.hasFunction(N));
  });

  Module M;
  for (const TypeData *TD : PreludeTypes)
    M.addTypeData(*TD);
  for (TypeData &TD : UserTypes)
    M.addTypeData(TD);
  for (const std::string &N : Prelude.functionNames())
    if (!UserFnNames.count(N))
      M.addFunction(N, Prelude.function(N));
  for (auto &[N, F] : UserFns)
    M.addFunction(N, F);
  return M;
}

Expr Parser::parseStandaloneExpr(const Module &Context) {
  for (const std::string &N : Context.typeDataNames()) {
    const TypeData &TD = Context.typeData(N);
    Adts[N] = &TD;
    for (const Constructor &C : TD.constructors)
      Ctors[C->name] = C;
  }
  Expr E = parseExpr();
  if (!is(TokKind::Eof))
    error(cur(),
          fmt::format("expected end of input after the expression, found {}",
                      describeToken(cur())));
  checkReferences([&](const std::string &N) { return Context.hasFunction(N); });
  return E;
}

Type Parser::parseStandaloneType(const Module &Context) {
  for (const std::string &N : Context.typeDataNames())
    Adts[N] = &Context.typeData(N);
  Type T = parseType();
  if (!is(TokKind::Eof))
    error(cur(), fmt::format("expected end of input after the type, found {}",
                             describeToken(cur())));
  checkReferences([](const std::string &) { return true; });
  return T;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

std::vector<Dim> Parser::parseDims() {
  expect(TokKind::LParen, "'(' or '?' for the shape");
  std::vector<Dim> Dims;
  while (!is(TokKind::RParen)) {
    const Token &T = cur();
    if (T.kind == TokKind::Int) {
      if (!T.suffix.empty() || T.text[0] == '-')
        error(T, fmt::format("invalid dimension {}", describeToken(T)));
      errno = 0;
      long long V = std::strtoll(T.text.c_str(), nullptr, 10);
      if (errno == ERANGE)
        error(T, "dimension out of range");
      Dims.push_back(Dim::constant(V));
      advance();
    } else if (T.kind == TokKind::Question) {
      Dims.push_back(Dim::any());
      advance();
    } else if (T.kind == TokKind::Ident && T.text != "_") {
      Dims.push_back(Dim::symbol(T.text));
      advance();
    } else {
      error(T,
            fmt::format("expected a dimension (integer, name or '?'), found {}",
                        describeToken(T)));
    }
    if (!accept(TokKind::Comma))
      break;
  }
  expect(TokKind::RParen, "')' after the dimensions");
  return Dims;
}

Type Parser::parseType() {
  DepthGuard G(*this);
  const Token &T = cur();
  if (T.kind == TokKind::LParen) {
    advance();
    std::vector<Type> Fields;
    bool Comma = false;
    while (!is(TokKind::RParen)) {
      Fields.push_back(parseType());
      Comma = accept(TokKind::Comma);
      if (!Comma)
        break;
    }
    expect(TokKind::RParen, "')' after the tuple type");
    if (Fields.size() == 1 && !Comma)
      return Fields[0]; // parenthesized
    return tupleType(std::move(Fields));
  }
  if (T.kind != TokKind::Ident)
    error(T, fmt::format("expected a type, found {}", describeToken(T)));
  if (T.text == "Tensor" && peekTok().kind == TokKind::LBracket) {
    advance();
    advance();
    std::optional<std::vector<Dim>> Dims;
    if (!accept(TokKind::Question))
      Dims = parseDims();
    expect(TokKind::Comma, "',' between the shape and the dtype");
    const Token &DT = expect(TokKind::Ident, "a dtype");
    DType D;
    try {
      D = parseDType(DT.text);
    } catch (const Error &) {
      error(DT, fmt::format("unknown dtype '{}'", DT.text));
    }
    expect(TokKind::RBracket, "']' after the dtype");
    return Dims ? tensorType(std::move(*Dims), D) : tensorTypeUnknownRank(D);
  }
  if (T.text == "fn") {
    advance();
    size_t TypeMark = TypeVars.size();
    std::vector<Type> TPs = parseTypeParams();
    expect(TokKind::LParen, "'(' after 'fn' in a function type");
    std::vector<Type> Params;
    while (!is(TokKind::RParen)) {
      Params.push_back(parseType());
      if (!accept(TokKind::Comma))
        break;
    }
    expect(TokKind::RParen, "')' after the parameter types");
    expect(TokKind::Arrow, "'->' in a function type");
    Type Ret = parseType();
    TypeVars.resize(TypeMark);
    return funcType(std::move(Params), std::move(Ret), std::move(TPs));
  }
  if (T.text == "_") {
    advance();
    return incompleteType();
  }
  if (Type TV = lookupTypeVar(T.text)) {
    advance();
    return TV;
  }
  Token NameTok = advance();
  std::vector<Type> Args;
  if (accept(TokKind::LBracket)) {
    while (!is(TokKind::RBracket)) {
      Args.push_back(parseType());
      if (!accept(TokKind::Comma))
        break;
    }
    expect(TokKind::RBracket, "']' after the type arguments");
  }
  AdtRefs.push_back({NameTok.text, Args.size(), NameTok});
  return typeCall(NameTok.text, std::move(Args));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Expr Parser::parseExpr() {
  DepthGuard G(*this);
  return parseLetsOrPostfix();
}

Expr Parser::parseLetsOrPostfix() {
  if (!isIdent("let"))
    return parsePostfix();
  // A let chain is parsed in a loop, so its length does not cost stack.
  std::vector<std::pair<Var, Expr>> Chain;
  size_t VarMark = VarLog.size();
  while (isIdent("let")) {
    advance();
    const Token &NameTok = expect(TokKind::LocalName, "a variable after 'let'");
    std::string Name = NameTok.text;
    Type Ann;
    if (accept(TokKind::Colon))
      Ann = parseType();
    expect(TokKind::Equal, fmt::format("'=' after 'let %{}'", Name));
    Var V = var(Name, Ann);
    bool Recursive = isIdent("fn"); // a let-bound fn sees itself
    if (Recursive)
      pushVar(Name, V);
    Expr Value = parseExpr();
    if (!Recursive)
      pushVar(Name, V);
    expect(TokKind::Semi, "';' after the let binding");
    Chain.push_back({std::move(V), std::move(Value)});
  }
  Expr Body;
  {
    DepthGuard G(*this); // bounds `{ let ...; { let ...; ... } }`
    Body = parsePostfix();
  }
  popVarsTo(VarMark);
  for (size_t I = Chain.size(); I-- > 0;)
    Body = let(std::move(Chain[I].first), std::move(Chain[I].second),
               std::move(Body));
  return Body;
}

Expr Parser::parsePostfix() {
  Expr E = parsePrimary();
  while (true) {
    if (is(TokKind::LParen)) {
      std::vector<Expr> Args;
      Attrs A;
      parseCallArgs(Args, A);
      E = call(std::move(E), std::move(Args), std::move(A));
    } else if (is(TokKind::Dot)) {
      advance();
      const Token &T = cur();
      if (T.kind != TokKind::Int || !T.suffix.empty() || T.text[0] == '-')
        error(T, fmt::format("expected a tuple index after '.', found {}",
                             describeToken(T)));
      errno = 0;
      long long V = std::strtoll(T.text.c_str(), nullptr, 10);
      if (errno == ERANGE)
        error(T, "tuple index out of range");
      advance();
      E = tupleGetItem(std::move(E), V);
    } else {
      return E;
    }
  }
}

void Parser::parseAttr(Attrs &A) {
  const Token &K = advance(); // Ident or String
  expect(TokKind::Equal, "'=' after the attribute name");
  if (A.has(K.text))
    error(K, fmt::format("duplicate attribute '{}'", K.text));
  A.set(K.text, parseAttrValue());
}

void Parser::parseCallArgs(std::vector<Expr> &Args, Attrs &A) {
  expect(TokKind::LParen, "'('");
  while (!is(TokKind::RParen)) {
    if ((is(TokKind::Ident) || is(TokKind::String)) &&
        peekTok().kind == TokKind::Equal) {
      parseAttr(A);
    } else {
      if (!A.empty())
        error(cur(), "positional argument after attributes");
      Args.push_back(parseExpr());
    }
    if (!accept(TokKind::Comma))
      break;
  }
  if (!is(TokKind::RParen))
    error(cur(), fmt::format("expected ')' after arguments, found {}",
                             describeToken(cur())));
  advance();
}

Expr Parser::parsePrimary() {
  const Token &T = cur();
  switch (T.kind) {
  case TokKind::LocalName: {
    Var V = lookupVar(T.text);
    if (!V)
      error(T, fmt::format("undefined variable '%{}'", T.text));
    advance();
    return V;
  }
  case TokKind::GlobalName: {
    GlobalRefs.push_back({T.text, T});
    std::string Name = T.text;
    advance();
    return globalVar(std::move(Name));
  }
  case TokKind::Int:
  case TokKind::Float: return parseScalarLiteral();
  case TokKind::LParen: {
    advance();
    std::vector<Expr> Fields;
    bool Comma = false;
    while (!is(TokKind::RParen)) {
      Fields.push_back(parseExpr());
      Comma = accept(TokKind::Comma);
      if (!Comma)
        break;
    }
    if (!is(TokKind::RParen))
      error(cur(), fmt::format("expected ')' after {}, found {}",
                               Fields.size() == 1 && !Comma ? "the expression"
                                                            : "tuple fields",
                               describeToken(cur())));
    advance();
    if (Fields.size() == 1 && !Comma)
      return Fields[0];
    return tuple(std::move(Fields));
  }
  case TokKind::LBrace: return parseBlock();
  case TokKind::Ident: return parseIdentExpr();
  default: break;
  }
  error(T, fmt::format("expected an expression, found {}", describeToken(T)));
}

Expr Parser::parseBlock() {
  expect(TokKind::LBrace, "'{'");
  // A let chain in braces counts as one level, as without them: the printer
  // adds braces around lets, and what it prints must parse within the limit.
  Expr E = isIdent("let") ? parseLetsOrPostfix() : parseExpr();
  if (!is(TokKind::RBrace))
    error(cur(), fmt::format("expected '}}' at the end of the block, found {}",
                             describeToken(cur())));
  advance();
  return E;
}

Expr Parser::parseIdentExpr() {
  const Token &T = cur();
  const std::string &S = T.text;
  if (S == "fn")
    return parseFunction();
  if (S == "if")
    return parseIf();
  if (S == "match")
    return parseMatch();
  if (S == "const" && peekTok().kind == TokKind::LBracket)
    return constant(parseTensorConst());
  if (S == "true" || S == "false") {
    Tensor B = Tensor::empty({}, DType::Bool);
    store(B, 0, S == "true");
    advance();
    return constant(std::move(B));
  }
  auto CI = Ctors.find(S);
  if (CI != Ctors.end()) {
    advance();
    const Constructor &C = CI->second;
    if (is(TokKind::LParen)) {
      std::vector<Expr> Args;
      Attrs A;
      parseCallArgs(Args, A);
      return call(C, std::move(Args), std::move(A));
    }
    // A bare nullary constructor is its value: a call with no arguments.
    if (C->inputs.empty())
      return call(C, {});
    return C;
  }
  if (S[0] >= 'A' && S[0] <= 'Z')
    error(T, fmt::format("unknown constructor '{}'", S));
  // A dotted name (dnnl.conv2d_nchwc_fused, as the printer writes the VM
  // compiler's kernel operators): name tokens joined by dots, which no
  // other expression has (a tuple index after a dot is a number).
  std::string Name = S;
  size_t NameTokens = 1;
  while (peekTok(2 * NameTokens - 1).kind == TokKind::Dot &&
         peekTok(2 * NameTokens).kind == TokKind::Ident) {
    Name += "." + peekTok(2 * NameTokens).text;
    ++NameTokens;
  }
  const OpInfo *Info = OpRegistry::global().find(Name);
  if (!Info) {
    if (peekTok(2 * NameTokens - 1).kind == TokKind::LParen)
      error(T, fmt::format("unknown operator '{}'", Name));
    error(T, fmt::format("unexpected identifier '{}'", Name));
  }
  for (size_t I = 0; I < 2 * NameTokens - 1; ++I)
    advance();
  Expr O = std::make_shared<OpNode>(Info);
  if (!is(TokKind::LParen))
    return O; // the operator as a value
  std::vector<Expr> Args;
  Attrs A;
  parseCallArgs(Args, A);
  // The call comes from the operator's name in the source: "line:column".
  OriginScope Scope(fmt::format("{}:{}", T.line, T.col));
  return call(std::move(O), std::move(Args), std::move(A));
}

Expr Parser::parseFunction() {
  expectIdent("fn", "'fn'");
  size_t VarMark = VarLog.size(), TypeMark = TypeVars.size();
  std::vector<Type> TPs = parseTypeParams();
  std::vector<Var> Params;
  Attrs A;
  parseParams(Params, A);
  Type Ret;
  if (accept(TokKind::Arrow))
    Ret = parseType();
  if (!is(TokKind::LBrace))
    error(cur(), fmt::format("expected '{{' before the function body, found {}",
                             describeToken(cur())));
  Expr Body = parseBlock();
  popVarsTo(VarMark);
  TypeVars.resize(TypeMark);
  return function(std::move(Params), std::move(Body), std::move(Ret),
                  std::move(TPs), std::move(A));
}

Expr Parser::parseIf() {
  expectIdent("if", "'if'");
  expect(TokKind::LParen, "'(' after 'if'");
  Expr Cond = parseExpr();
  expect(TokKind::RParen, "')' after the condition");
  if (!is(TokKind::LBrace))
    error(cur(), fmt::format("expected '{{' after the condition, found {}",
                             describeToken(cur())));
  Expr Then = parseBlock();
  expectIdent("else", "'else'");
  Expr Else;
  if (isIdent("if")) {
    DepthGuard G(*this);
    Else = parseIf(); // else if
  } else {
    if (!is(TokKind::LBrace))
      error(cur(), fmt::format("expected '{{' after 'else', found {}",
                               describeToken(cur())));
    Else = parseBlock();
  }
  return ifThenElse(std::move(Cond), std::move(Then), std::move(Else));
}

Expr Parser::parseMatch() {
  expectIdent("match", "'match'");
  expect(TokKind::LParen, "'(' after 'match'");
  Expr Data = parseExpr();
  expect(TokKind::RParen, "')' after the matched expression");
  expect(TokKind::LBrace, "'{' before the match clauses");
  std::vector<Clause> Clauses;
  while (!is(TokKind::RBrace)) {
    size_t VarMark = VarLog.size();
    Pattern P = parsePattern();
    expect(TokKind::FatArrow, "'=>' after the pattern");
    Expr Rhs = parseExpr();
    popVarsTo(VarMark);
    Clauses.push_back({std::move(P), std::move(Rhs)});
    if (!accept(TokKind::Comma))
      break;
  }
  if (!is(TokKind::RBrace))
    error(cur(),
          fmt::format("expected ',' or '}}' after the match clause, found {}",
                      describeToken(cur())));
  advance();
  return match(std::move(Data), std::move(Clauses));
}

Pattern Parser::parsePattern() {
  DepthGuard G(*this);
  const Token &T = cur();
  if (T.kind == TokKind::LocalName) {
    std::string Name = T.text;
    advance();
    Type Ann;
    if (accept(TokKind::Colon))
      Ann = parseType();
    Var V = var(Name, Ann);
    pushVar(Name, V);
    return PatternNode::bind(V);
  }
  if (T.kind == TokKind::LParen) {
    advance();
    std::vector<Pattern> Fields;
    bool Comma = false;
    while (!is(TokKind::RParen)) {
      Fields.push_back(parsePattern());
      Comma = accept(TokKind::Comma);
      if (!Comma)
        break;
    }
    expect(TokKind::RParen, "')' after the tuple pattern");
    if (Fields.size() == 1 && !Comma)
      return Fields[0];
    return PatternNode::tuple(std::move(Fields));
  }
  if (T.kind == TokKind::Ident) {
    if (T.text == "_") {
      advance();
      return PatternNode::wildcard();
    }
    auto CI = Ctors.find(T.text);
    if (CI == Ctors.end())
      error(T, fmt::format("unknown constructor '{}'", T.text));
    advance();
    std::vector<Pattern> Fields;
    if (accept(TokKind::LParen)) {
      while (!is(TokKind::RParen)) {
        Fields.push_back(parsePattern());
        if (!accept(TokKind::Comma))
          break;
      }
      expect(TokKind::RParen, "')' after the constructor's patterns");
    }
    return PatternNode::constructor(CI->second, std::move(Fields));
  }
  error(T, fmt::format("expected a pattern, found {}", describeToken(T)));
}

//===----------------------------------------------------------------------===//
// Literals and attributes
//===----------------------------------------------------------------------===//

/// The value of an integer token; fails when it does not fit in int64.
int64_t intValue(const Token &T, std::string &Err) {
  errno = 0;
  long long V = std::strtoll(T.text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    Err = fmt::format("integer literal {} out of range", describeToken(T));
  return V;
}

/// The value of a float token (or an int token used as a float) in type D.
double floatValue(const Token &T, DType D, std::string &Err) {
  const std::string &S = T.text;
  bool Neg = !S.empty() && S[0] == '-';
  std::string_view Body =
      Neg ? std::string_view(S).substr(1) : std::string_view(S);
  double V;
  if (Body == "nan") {
    V = std::numeric_limits<double>::quiet_NaN();
    return Neg ? -V : V;
  }
  if (Body == "inf") {
    V = std::numeric_limits<double>::infinity();
    return Neg ? -V : V;
  }
  if (D == DType::Float64) {
    V = std::strtod(S.c_str(), nullptr);
  } else {
    // Parse directly as float: going through double could round twice.
    V = std::strtof(S.c_str(), nullptr);
    if (D == DType::Float16 && std::isfinite(V) &&
        std::isinf((float)Half((float)V)))
      Err =
          fmt::format("literal {} out of range for float16", describeToken(T));
    if (D == DType::BFloat16 && std::isfinite(V) &&
        std::isinf((float)BFloat16((float)V)))
      Err =
          fmt::format("literal {} out of range for bfloat16", describeToken(T));
  }
  if (std::isinf(V))
    Err = fmt::format("literal {} out of range for {}", describeToken(T),
                      dtypeName(D));
  return V;
}

/// Writes element I of T from token Tok (already checked to be a number or
/// true/false); fails with a message naming the token when it does not fit.
void storeElement(Tensor &T, int64_t I, const Token &Tok, std::string &Err) {
  DType D = T.dtype();
  if (isString(D) != (Tok.kind == TokKind::String)) {
    Err = isString(D) ? fmt::format("expected a quoted string for a string "
                                    "constant, found {}",
                                    describeToken(Tok))
                      : fmt::format("a {} in a {} constant", describeToken(Tok),
                                    dtypeName(D));
    return;
  }
  if (isString(D)) {
    setStringElement(T, I, Tok.text);
    return;
  }
  if (isNarrow(D)) {
    // Each element is a number that the type holds exactly or rounds to;
    // one beyond its range is an error, not a saturated value.
    if (Tok.kind != TokKind::Int && Tok.kind != TokKind::Float) {
      Err = fmt::format("expected a number for a {} constant, found {}",
                        dtypeName(D), describeToken(Tok));
      return;
    }
    double V = floatValue(Tok, DType::Float64, Err);
    uint8_t B = floatToNarrow(D, V, /*Saturate=*/false);
    float Back = narrowToFloat(D, B);
    bool Fits = !dtypeInfo(D).narrowFloat
                    ? Tok.kind == TokKind::Int && (double)Back == V
                : std::isnan(V) ? true
                : std::isinf(V) ? std::isinf(Back)
                                : std::isfinite(Back);
    if (!Fits && Err.empty())
      Err = fmt::format("literal {} out of range for {}", describeToken(Tok),
                        dtypeName(D));
    static_cast<uint8_t *>(T.rawData())[I] = B;
    return;
  }
  if (isFloat(D)) {
    if (Tok.kind != TokKind::Int && Tok.kind != TokKind::Float) {
      Err = fmt::format("expected a number for a {} constant, found {}",
                        dtypeName(D), describeToken(Tok));
      return;
    }
    double V = floatValue(Tok, D, Err);
    if (D == DType::Float16)
      store(T, I, Half((float)V));
    else if (D == DType::BFloat16)
      store(T, I, BFloat16((float)V));
    else if (D == DType::Float32)
      store(T, I, (float)V);
    else
      store(T, I, V);
    return;
  }
  if (D == DType::Bool) {
    if (Tok.kind == TokKind::Ident &&
        (Tok.text == "true" || Tok.text == "false")) {
      store(T, I, (bool)(Tok.text == "true"));
      return;
    }
    if (Tok.kind == TokKind::Int && (Tok.text == "0" || Tok.text == "1")) {
      store(T, I, (bool)(Tok.text == "1"));
      return;
    }
    Err = fmt::format("expected true or false for a bool constant, found {}",
                      describeToken(Tok));
    return;
  }
  if (Tok.kind != TokKind::Int) {
    Err = fmt::format("expected an integer for a {} constant, found {}",
                      dtypeName(D), describeToken(Tok));
    return;
  }
  if (!isSigned(D)) {
    // Unsigned: parsed as unsigned so that uint64 covers its whole range.
    errno = 0;
    unsigned long long U = std::strtoull(Tok.text.c_str(), nullptr, 10);
    bool URange = Tok.text[0] != '-' && errno != ERANGE;
    if (D == DType::UInt8)
      URange = URange && U <= UINT8_MAX;
    else if (D == DType::UInt16)
      URange = URange && U <= UINT16_MAX;
    else if (D == DType::UInt32)
      URange = URange && U <= UINT32_MAX;
    if (!URange) {
      Err = fmt::format("literal {} out of range for {}", describeToken(Tok),
                        dtypeName(D));
      return;
    }
    dispatchDType(D, [&](auto Tag) {
      using E = decltype(Tag);
      if constexpr (std::is_integral_v<E> && std::is_unsigned_v<E>)
        store(T, I, (E)U);
    });
    return;
  }
  errno = 0;
  long long V = std::strtoll(Tok.text.c_str(), nullptr, 10);
  bool Range = errno != ERANGE;
  switch (D) {
  case DType::Int8: Range = Range && V >= INT8_MIN && V <= INT8_MAX; break;
  case DType::Int16: Range = Range && V >= INT16_MIN && V <= INT16_MAX; break;
  case DType::Int32: Range = Range && V >= INT32_MIN && V <= INT32_MAX; break;
  default: break;
  }
  if (!Range) {
    Err = fmt::format("literal {} out of range for {}", describeToken(Tok),
                      dtypeName(D));
    return;
  }
  switch (D) {
  case DType::Int8: store(T, I, (int8_t)V); break;
  case DType::Int16: store(T, I, (int16_t)V); break;
  case DType::Int32: store(T, I, (int32_t)V); break;
  case DType::Int64: store(T, I, (int64_t)V); break;
  default: break;
  }
}

Expr Parser::parseScalarLiteral() {
  const Token &T = cur();
  DType D;
  const std::string &Sfx = T.suffix;
  if (Sfx.empty())
    D = T.kind == TokKind::Float ? DType::Float32 : DType::Int64;
  else if (Sfx == "i8")
    D = DType::Int8;
  else if (Sfx == "i16")
    D = DType::Int16;
  else if (Sfx == "i32")
    D = DType::Int32;
  else if (Sfx == "i64")
    D = DType::Int64;
  else if (Sfx == "u8")
    D = DType::UInt8;
  else if (Sfx == "u16")
    D = DType::UInt16;
  else if (Sfx == "u32")
    D = DType::UInt32;
  else if (Sfx == "u64")
    D = DType::UInt64;
  else if (Sfx == "f16")
    D = DType::Float16;
  else if (Sfx == "bf16")
    D = DType::BFloat16;
  else if (Sfx == "f32")
    D = DType::Float32;
  else
    D = DType::Float64;
  Tensor R = Tensor::empty({}, D);
  std::string Err;
  storeElement(R, 0, T, Err);
  if (!Err.empty())
    error(T, Err);
  advance();
  return constant(std::move(R));
}

Tensor Parser::parseTensorConst() {
  const Token &Start = cur();
  expectIdent("const", "'const'");
  expect(TokKind::LBracket, "'[' after 'const'");
  Shape Sh;
  {
    const Token &ShapeTok = cur();
    std::vector<Dim> Dims = parseDims();
    for (const Dim &D : Dims) {
      if (!D.isConst())
        error(ShapeTok, "a constant's shape must have only integer dimensions");
      Sh.push_back(D.value);
    }
  }
  expect(TokKind::Comma, "',' between the shape and the dtype");
  const Token &DT = expect(TokKind::Ident, "a dtype");
  DType D;
  try {
    D = parseDType(DT.text);
  } catch (const Error &) {
    error(DT, fmt::format("unknown dtype '{}'", DT.text));
  }
  expect(TokKind::RBracket, "']' after the dtype");
  expect(TokKind::LParen, "'(' before the constant's values");
  expect(TokKind::LBracket, "'[' before the constant's values");
  std::vector<size_t> ElemToks;
  while (!is(TokKind::RBracket)) {
    if (!is(TokKind::Int) && !is(TokKind::Float) && !is(TokKind::Ident) &&
        !is(TokKind::String))
      error(cur(),
            fmt::format("expected a value, found {}", describeToken(cur())));
    ElemToks.push_back(Idx);
    advance();
    if (!accept(TokKind::Comma))
      break;
  }
  expect(TokKind::RBracket, "']' after the constant's values");
  expect(TokKind::RParen, "')' after the constant");
  int64_t N;
  try {
    N = numElements(Sh);
  } catch (const Error &E) {
    error(Start, fmt::format("invalid constant shape: {}", E.what()));
  }
  if ((int64_t)ElemToks.size() != N)
    error(Start, fmt::format("constant of shape {} needs {} value{}, got {}",
                             shapeToString(Sh), N, N == 1 ? "" : "s",
                             ElemToks.size()));
  Tensor R = Tensor::empty(Sh, D);
  for (size_t I = 0; I < ElemToks.size(); ++I) {
    std::string Err;
    const Token &ET = Toks[ElemToks[I]];
    if (!ET.suffix.empty())
      error(ET,
            "values of a constant take no suffix (the dtype is given once)");
    storeElement(R, (int64_t)I, ET, Err);
    if (!Err.empty())
      error(ET, Err);
  }
  return R;
}

AttrValue Parser::parseAttrValue() {
  const Token &T = cur();
  switch (T.kind) {
  case TokKind::Int: {
    std::string Err;
    int64_t V = intValue(T, Err);
    if (!Err.empty())
      error(T, Err);
    advance();
    return V;
  }
  case TokKind::Float: {
    std::string Err;
    double V = floatValue(T, DType::Float64, Err);
    if (!Err.empty())
      error(T, Err);
    advance();
    return V;
  }
  case TokKind::String: {
    std::string S = T.text;
    advance();
    return S;
  }
  case TokKind::Ident:
    if (T.text == "const" && peekTok().kind == TokKind::LBracket)
      return parseTensorConst();
    if ((T.text == "ints" || T.text == "floats" || T.text == "strings") &&
        peekTok().kind == TokKind::LBracket)
      break; // a typed list
    error(T, fmt::format("expected an attribute value, found {}",
                         describeToken(T)));
  case TokKind::LBracket: break;
  default:
    error(T, fmt::format("expected an attribute value, found {}",
                         describeToken(T)));
  }
  // Lists: ints unless an element is a float (or the list is typed).
  std::string Kind;
  if (T.kind == TokKind::Ident) {
    Kind = T.text;
    advance();
  }
  expect(TokKind::LBracket, "'['");
  std::vector<size_t> Elems;
  bool AnyFloat = false, AnyString = false, AnyNumber = false;
  while (!is(TokKind::RBracket)) {
    const Token &E = cur();
    if (E.kind == TokKind::Int || E.kind == TokKind::Float) {
      AnyNumber = true;
      AnyFloat |= E.kind == TokKind::Float;
    } else if (E.kind == TokKind::String) {
      AnyString = true;
    } else {
      error(E,
            fmt::format("expected a list element, found {}", describeToken(E)));
    }
    Elems.push_back(Idx);
    advance();
    if (!accept(TokKind::Comma))
      break;
  }
  expect(TokKind::RBracket, "']' after the list");
  if (AnyString && AnyNumber)
    error(T, "a list attribute mixes strings and numbers");
  if (Kind.empty())
    Kind = AnyString ? "strings" : AnyFloat ? "floats" : "ints";
  if (Kind == "strings") {
    if (AnyNumber)
      error(T, "a 'strings' list contains numbers");
    std::vector<std::string> R;
    for (size_t I : Elems)
      R.push_back(Toks[I].text);
    return R;
  }
  if (AnyString)
    error(T, fmt::format("a '{}' list contains strings", Kind));
  if (Kind == "floats") {
    std::vector<double> R;
    for (size_t I : Elems) {
      std::string Err;
      R.push_back(floatValue(Toks[I], DType::Float64, Err));
      if (!Err.empty())
        error(Toks[I], Err);
    }
    return R;
  }
  std::vector<int64_t> R;
  for (size_t I : Elems) {
    if (Toks[I].kind != TokKind::Int)
      error(Toks[I], "an 'ints' list contains a float");
    std::string Err;
    R.push_back(intValue(Toks[I], Err));
    if (!Err.empty())
      error(Toks[I], Err);
  }
  return R;
}

} // namespace

Module parseModule(std::string_view Text, std::string_view FileName,
                   ParseOptions Opts) {
  Parser P(Text, FileName);
  return P.parseModule(Opts.importPrelude);
}

Expr parseExpr(std::string_view Text, const Module &Context) {
  Parser P(Text, "<string>");
  return P.parseStandaloneExpr(Context);
}

Type parseType(std::string_view Text, const Module &Context) {
  Parser P(Text, "<string>");
  return P.parseStandaloneType(Context);
}

} // namespace rivet::ir
