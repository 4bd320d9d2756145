//===- ValueConversion.cc - Interpreter values <-> VM objects -------------===//
//
// Tensors are shared (no copy); tuples are ADTObj with the tuple tag; ADT
// values carry their constructor by name. The spine of a long List (the last
// field of each cell) is walked iteratively, so a list of a million elements
// converts without deep recursion.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/ValueConversion.h"

#include "kernels/Error.h"

namespace rivet::vm {

namespace {

int32_t tagOf(const Executable &Exe, const ir::ConstructorNode &C) {
  for (size_t I = 0; I < Exe.constructors.size(); ++I)
    if (Exe.constructors[I].name == C.name && Exe.constructors[I].adt == C.adt)
      return (int32_t)I;
  for (size_t I = 0; I < Exe.constructors.size(); ++I)
    if (Exe.constructors[I].name == C.name)
      return (int32_t)I;
  fail("value conversion: the executable has no constructor {}", C.name);
}

} // namespace

ObjectRef toObject(const ir::Value &V, const Executable &Exe) {
  if (!V.defined())
    fail("value conversion: undefined value");
  switch (V.kind()) {
  case ir::ValueKind::Tensor: return makeTensor(V.tensor());
  case ir::ValueKind::Tuple: {
    std::vector<ObjectRef> Fields;
    for (const ir::Value &F : V.fields())
      Fields.push_back(toObject(F, Exe));
    return std::make_shared<ADTObj>(ADTObj::kTupleTag, std::move(Fields));
  }
  case ir::ValueKind::ADT: {
    // Cells of the spine, outermost first; built back innermost first.
    std::vector<const ir::Value *> Spine;
    const ir::Value *Cur = &V;
    while (Cur->isADT()) {
      Spine.push_back(Cur);
      if (Cur->fields().empty() || !Cur->fields().back().isADT())
        break;
      Cur = &Cur->fields().back();
    }
    ObjectRef Tail;
    for (auto It = Spine.rbegin(); It != Spine.rend(); ++It) {
      const ir::Value &Cell = **It;
      std::vector<ObjectRef> Fields;
      size_t N = Cell.fields().size();
      for (size_t I = 0; I < N; ++I) {
        bool SpineField = I + 1 == N && Tail && Cell.fields()[I].isADT();
        Fields.push_back(SpineField ? Tail : toObject(Cell.fields()[I], Exe));
      }
      Tail =
          std::make_shared<ADTObj>(tagOf(Exe, *Cell.ctor()), std::move(Fields));
    }
    return Tail;
  }
  case ir::ValueKind::Closure:
  case ir::ValueKind::ConstructorFn:
    fail("value conversion: a function value cannot be passed to or from "
         "the VM");
  }
  fail("value conversion: unknown value kind");
}

ir::Value toValue(const ObjectRef &O, const Executable &Exe,
                  const ir::Module &M) {
  if (!O)
    fail("value conversion: null VM object");
  if (const auto *T = O->as<TensorObj>())
    return ir::Value(T->value);
  if (const auto *A = O->as<ADTObj>()) {
    if (A->tag == ADTObj::kTupleTag) {
      std::vector<ir::Value> Fields;
      for (const ObjectRef &F : A->fields)
        Fields.push_back(toValue(F, Exe, M));
      return ir::Value::tuple(std::move(Fields));
    }
    std::vector<const ADTObj *> Spine;
    const ADTObj *Cur = A;
    for (;;) {
      Spine.push_back(Cur);
      if (Cur->fields.empty() || !Cur->fields.back())
        break;
      const auto *Next = Cur->fields.back()->as<ADTObj>();
      if (!Next || Next->tag == ADTObj::kTupleTag)
        break;
      Cur = Next;
    }
    ir::Value Tail;
    bool HaveTail = false;
    for (auto It = Spine.rbegin(); It != Spine.rend(); ++It) {
      const ADTObj &Cell = **It;
      if (Cell.tag < 0 || (size_t)Cell.tag >= Exe.constructors.size())
        fail("value conversion: constructor tag {} out of range", Cell.tag);
      const ConstructorInfo &CI = Exe.constructors[Cell.tag];
      ir::Constructor C = M.findConstructor(CI.name);
      if (!C)
        fail("value conversion: the module has no constructor {}", CI.name);
      std::vector<ir::Value> Fields;
      size_t N = Cell.fields.size();
      for (size_t I = 0; I < N; ++I) {
        bool SpineField = I + 1 == N && HaveTail;
        Fields.push_back(SpineField ? Tail : toValue(Cell.fields[I], Exe, M));
      }
      Tail = ir::Value::adt(std::move(C), std::move(Fields));
      HaveTail = true;
    }
    return Tail;
  }
  if (O->as<ClosureObj>())
    fail("value conversion: a closure cannot be converted to an interpreter "
         "value");
  fail("value conversion: a storage object is not a value");
}

} // namespace rivet::vm
