//===- Object.cc - Run-time values of the VM ------------------------------===//
#include "vm/Object.h"

#include <algorithm>

namespace rivet::vm {

/// Destroys the fields without recursion: a field whose last reference is
/// this one gives its own fields to a work list before it dies.
ADTObj::~ADTObj() {
  // Iterative, so that a long list does not recurse once per element. Only
  // ADT fields go on the work list (a list's tail: it never grows past its
  // first capacity); tensors and shared values are released at once. A
  // destructor must not throw: if the work list cannot grow (out of
  // memory), that field is released by its own destructor instead.
  std::vector<ObjectRef> Work = std::move(fields);
  while (!Work.empty()) {
    ObjectRef O = std::move(Work.back());
    Work.pop_back();
    if (!O || O.use_count() != 1 || O->kind != ObjectKind::ADT)
      continue;
    // The last reference: nobody else can see the object any more.
    auto *A = const_cast<ADTObj *>(static_cast<const ADTObj *>(O.get()));
    for (ObjectRef &F : A->fields) {
      if (F && F.use_count() == 1 && F->kind == ObjectKind::ADT) {
        try {
          Work.push_back(std::move(F));
        } catch (const std::bad_alloc &) {
        }
      }
      F.reset();
    }
    A->fields.clear();
  }
}

static const char *kindName(const ObjectRef &O) {
  if (!O)
    return "an empty register";
  switch (O->kind) {
  case ObjectKind::Tensor: return "a tensor";
  case ObjectKind::ADT:
    return static_cast<const ADTObj *>(O.get())->tag == ADTObj::kTupleTag
               ? "a tuple"
               : "an ADT value";
  case ObjectKind::Closure: return "a closure";
  case ObjectKind::Storage: return "a storage buffer";
  case ObjectKind::List: return "a List";
  }
  return "an unknown object";
}

void failNotTensor(const ObjectRef &O, const char *What) {
  fail("{}: expected a tensor, got {}", What, kindName(O));
}

const ADTObj &asADT(const ObjectRef &O, const char *What) {
  if (O && O->kind == ObjectKind::ADT)
    return *static_cast<const ADTObj *>(O.get());
  fail("{}: expected an ADT value or tuple, got {}", What, kindName(O));
}

} // namespace rivet::vm
