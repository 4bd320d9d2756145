//===- ListPrimitives.cc - The List primitives on interpreter values ------===//
#include "ir/ListPrimitives.h"

#include "ir/Op.h"
#include "kernels/Error.h"
#include "kernels/ListPrimitiveSpec.h"

#include <string_view>

namespace rivet::ir {

namespace {

/// The prelude's List constructors in the module being run.
struct ListCells {
  Constructor Cons, Nil;

  Value build(const std::vector<Value> &Elems) const {
    Value L = Value::adt(Nil, {});
    for (auto It = Elems.rbegin(); It != Elems.rend(); ++It)
      L = Value::adt(Cons, {*It, L});
    return L;
  }
};

/// The elements of List L, in order; throws naming Op when L is not a List.
std::vector<Value> elementsOf(std::string_view Op, const Value &L) {
  std::vector<Value> Elems;
  const Value *Cell = &L;
  while (Cell->isADT() && Cell->fields().size() == 2) {
    Elems.push_back(Cell->fields()[0]);
    Cell = &Cell->fields()[1];
  }
  if (!Cell->isADT() || !Cell->fields().empty())
    fail("{}: expected a List, got {}", Op, valueToString(L));
  return Elems;
}

const Tensor &positionOf(std::string_view Op, const Value &V) {
  return V.tensor(std::string(Op) + "'s position");
}

using Primitive = Value (*)(const std::vector<Value> &Args,
                            const ListCells &Cells);

Value listLength(const std::vector<Value> &Args, const ListCells &) {
  return Value(Tensor::scalar<int64_t>(
      (int64_t)elementsOf("list_length", Args[0]).size()));
}

Value listAt(const std::vector<Value> &Args, const ListCells &) {
  std::vector<Value> Elems = elementsOf("list_at", Args[0]);
  return Elems[listPosition("list_at", positionOf("list_at", Args[1]),
                            Elems.size(), /*AtEnd=*/false)];
}

Value listInsert(const std::vector<Value> &Args, const ListCells &Cells) {
  std::vector<Value> Elems = elementsOf("list_insert", Args[0]);
  size_t At = Args.size() < 3 ? Elems.size()
                              : listPosition("list_insert",
                                             positionOf("list_insert", Args[2]),
                                             Elems.size(), /*AtEnd=*/true);
  Elems.insert(Elems.begin() + (ptrdiff_t)At, Args[1]);
  return Cells.build(Elems);
}

Value listErase(const std::vector<Value> &Args, const ListCells &Cells) {
  std::vector<Value> Elems = elementsOf("list_erase", Args[0]);
  if (Elems.empty() && Args.size() < 2)
    fail("list_erase: the List is empty");
  size_t At = Args.size() < 2 ? Elems.size() - 1
                              : listPosition("list_erase",
                                             positionOf("list_erase", Args[1]),
                                             Elems.size(), /*AtEnd=*/false);
  Elems.erase(Elems.begin() + (ptrdiff_t)At);
  return Cells.build(Elems);
}

/// Each primitive's meaning, by operator name.
struct PrimitiveEntry {
  std::string_view Name;
  Primitive Fn;
};
constexpr PrimitiveEntry Primitives[] = {
    {"list_length", listLength},
    {"list_at", listAt},
    {"list_insert", listInsert},
    {"list_erase", listErase},
};

} // namespace

Value applyListPrimitive(const OpInfo &Op, const std::vector<Value> &Args,
                         const Module &M) {
  for (const PrimitiveEntry &P : Primitives) {
    if (P.Name != Op.name)
      continue;
    checkListOperands(Op.name, Args.size());
    ListCells Cells{M.findConstructor("Cons"), M.findConstructor("Nil")};
    if (!Cells.Cons || !Cells.Nil)
      fail("{}: the module has no prelude List", Op.name);
    return P.Fn(Args, Cells);
  }
  fail("'{}' is not a List primitive", Op.name);
}

} // namespace rivet::ir
