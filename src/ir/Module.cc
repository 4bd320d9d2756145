//===- Module.cc - Global functions and type definitions ------------------===//
#include "ir/Module.h"

#include "kernels/Error.h"

namespace rivet::ir {

void Module::addFunction(const std::string &Name, Expr Fn) {
  RIVET_CHECK(Fn && Fn->as<FunctionNode>(), "global '@{}' must be a function",
              Name);
  if (!Fns.count(Name))
    FnOrder.push_back(Name);
  Fns[Name] = std::move(Fn);
}

void Module::addTypeData(TypeData TD) {
  if (!Types.count(TD.name))
    TypeOrder.push_back(TD.name);
  std::string Name = TD.name;
  Types[Name] = std::move(TD);
}

bool Module::hasFunction(const std::string &Name) const {
  return Fns.count(Name) != 0;
}

const Expr &Module::function(const std::string &Name) const {
  auto It = Fns.find(Name);
  if (It == Fns.end())
    fail("no global function '@{}' in the module", Name);
  return It->second;
}

const TypeData *Module::findTypeData(const std::string &Name) const {
  auto It = Types.find(Name);
  return It == Types.end() ? nullptr : &It->second;
}

const TypeData &Module::typeData(const std::string &Name) const {
  if (const TypeData *TD = findTypeData(Name))
    return *TD;
  fail("no type definition '{}' in the module", Name);
}

Constructor Module::findConstructor(const std::string &Name) const {
  for (auto &[_, TD] : Types)
    for (const Constructor &C : TD.constructors)
      if (C->name == Name)
        return C;
  return nullptr;
}

} // namespace rivet::ir
