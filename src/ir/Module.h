//===- Module.h - A program: global functions and ADTs ----------*- C++ -*-===//
#pragma once

#include "ir/Expr.h"

#include <map>
#include <string>
#include <vector>

namespace rivet::ir {

/// An algebraic data type definition: type List[A] { Cons(A, List[A]), Nil }.
struct TypeData {
  std::string name;
  std::vector<Type> typeParams;          // TypeVarNodes
  std::vector<Constructor> constructors; // tag == index
};

/// Named global functions (main is the entry point) and type definitions.
/// Order of definition is kept for printing.
class Module {
public:
  /// Adds or replaces a global function (a FunctionNode).
  void addFunction(const std::string &Name, Expr Fn);
  void addTypeData(TypeData TD);

  bool hasFunction(const std::string &Name) const;
  /// Throws rivet::Error naming the function when absent.
  const Expr &function(const std::string &Name) const;
  const std::vector<std::string> &functionNames() const { return FnOrder; }

  const TypeData *findTypeData(const std::string &Name) const;
  const TypeData &typeData(const std::string &Name) const;
  const std::vector<std::string> &typeDataNames() const { return TypeOrder; }
  /// Looks a constructor up by name across all ADTs; null when absent.
  Constructor findConstructor(const std::string &Name) const;

  /// A module with the prelude (List, Option, map, foldl, nth, length,
  /// concat) already in it.
  static Module withPrelude();
  /// Adds the prelude's definitions that are not yet present.
  void importPrelude();

private:
  std::map<std::string, Expr> Fns;
  std::vector<std::string> FnOrder;
  std::map<std::string, TypeData> Types;
  std::vector<std::string> TypeOrder;
};

} // namespace rivet::ir
