//===- Value.cc - Run-time values of the reference interpreter ------------===//
#include "ir/Value.h"

#include "kernels/Error.h"

#include <fmt/format.h>

namespace rivet::ir {

Value::Value(Tensor T) : Node(std::make_shared<ValueNode>(ValueKind::Tensor)) {
  Node->tensor = std::move(T);
}

ValueKind Value::kind() const {
  RIVET_CHECK(Node, "use of an undefined interpreter value");
  return Node->kind;
}

static const char *kindName(ValueKind K) {
  switch (K) {
  case ValueKind::Tensor: return "a tensor";
  case ValueKind::Tuple: return "a tuple";
  case ValueKind::Closure: return "a function";
  case ValueKind::ADT: return "an ADT value";
  case ValueKind::ConstructorFn: return "a constructor";
  }
  return "a value";
}

const Tensor &Value::tensor(const std::string &What) const {
  if (!Node)
    fail("{} is undefined, expected a tensor", What);
  if (Node->kind != ValueKind::Tensor)
    fail("{} is {} ({}), expected a tensor", What, kindName(Node->kind),
         valueToString(*this));
  return Node->tensor;
}

const std::vector<Value> &Value::fields() const {
  RIVET_CHECK(Node, "use of an undefined interpreter value");
  return Node->fields;
}

const Constructor &Value::ctor() const {
  RIVET_CHECK(Node, "use of an undefined interpreter value");
  return Node->ctor;
}

Value Value::tuple(std::vector<Value> Fields) {
  Value V;
  V.Node = std::make_shared<ValueNode>(ValueKind::Tuple);
  V.Node->fields = std::move(Fields);
  return V;
}

Value Value::adt(Constructor C, std::vector<Value> Fields) {
  Value V;
  V.Node = std::make_shared<ValueNode>(ValueKind::ADT);
  V.Node->ctor = std::move(C);
  V.Node->fields = std::move(Fields);
  return V;
}

Value Value::constructorFn(Constructor C) {
  Value V;
  V.Node = std::make_shared<ValueNode>(ValueKind::ConstructorFn);
  V.Node->ctor = std::move(C);
  return V;
}

Value Value::closure(Expr Fn,
                     std::vector<std::pair<const VarNode *, Value>> Captured,
                     Var SelfVar, std::string Name) {
  RIVET_CHECK(Fn && Fn->as<FunctionNode>(), "closure of a non-function");
  Value V;
  V.Node = std::make_shared<ValueNode>(ValueKind::Closure);
  V.Node->fn = std::move(Fn);
  V.Node->captured = std::move(Captured);
  V.Node->selfVar = std::move(SelfVar);
  V.Node->name = std::move(Name);
  return V;
}

// Children whose last reference we hold are taken apart here, one at a time,
// instead of by recursive destructors: a List of 10^6 Cons cells would
// otherwise need 10^6 nested destructor frames.
ValueNode::~ValueNode() {
  if (fields.empty() && captured.empty())
    return;
  // Iterative (a long list must not recurse once per element) and never
  // throwing: a value that has fields of its own goes on the work list,
  // others are released at once; if the list cannot grow (out of memory),
  // that value is released by its own destructor instead.
  std::vector<Value> Work = std::move(fields); // its capacity, reused
  auto Take = [&Work](Value &V) {
    if (V.defined() && V.useCount() == 1 &&
        (!V.node().fields.empty() || !V.node().captured.empty())) {
      try {
        Work.push_back(std::move(V));
      } catch (const std::bad_alloc &) {
      }
    }
    V = Value();
  };
  fields.clear();
  for (auto &[_, V] : captured)
    Take(V);
  captured.clear();
  while (!Work.empty()) {
    Value V = std::move(Work.back());
    Work.pop_back();
    // Only the node we are about to free is taken apart; a shared one is
    // still alive elsewhere.
    if (!V.defined() || V.useCount() != 1)
      continue;
    auto &N = const_cast<ValueNode &>(V.node());
    for (Value &F : N.fields)
      Take(F);
    N.fields.clear();
    for (auto &[_, C] : N.captured)
      Take(C);
    N.captured.clear();
  }
}

static void render(const Value &V, std::string &Out, int Depth, int &Budget) {
  if (--Budget < 0 || Depth > 8) {
    Out += "...";
    return;
  }
  if (!V.defined()) {
    Out += "<undefined>";
    return;
  }
  const ValueNode &N = V.node();
  switch (N.kind) {
  case ValueKind::Tensor: {
    const Tensor &T = N.tensor;
    if (!T.defined()) {
      Out += "<undefined tensor>";
    } else if (T.hasData() && T.numel() == 1 && T.rank() == 0) {
      Out += fmt::format("{}({})", dtypeName(T.dtype()),
                         isFloat(T.dtype())
                             ? fmt::format("{}", T.elementAsDouble(0))
                             : fmt::format("{}", T.elementAsInt(0)));
    } else {
      Out += T.typeString();
    }
    return;
  }
  case ValueKind::Tuple: {
    Out += "(";
    for (size_t I = 0; I < N.fields.size(); ++I) {
      if (I)
        Out += ", ";
      render(N.fields[I], Out, Depth + 1, Budget);
    }
    if (N.fields.size() == 1)
      Out += ",";
    Out += ")";
    return;
  }
  case ValueKind::ADT: {
    Out += N.ctor ? N.ctor->name : "<ctor>";
    if (N.fields.empty())
      return;
    Out += "(";
    for (size_t I = 0; I < N.fields.size(); ++I) {
      if (I)
        Out += ", ";
      render(N.fields[I], Out, Depth + 1, Budget);
    }
    Out += ")";
    return;
  }
  case ValueKind::Closure: Out += "<closure " + N.name + ">"; return;
  case ValueKind::ConstructorFn:
    Out += "<constructor " + (N.ctor ? N.ctor->name : std::string("?")) + ">";
    return;
  }
}

std::string valueToString(const Value &V) {
  std::string Out;
  int Budget = 24;
  render(V, Out, 0, Budget);
  return Out;
}

} // namespace rivet::ir
