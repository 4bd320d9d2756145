//===- ListPrimitives.cc - The List primitives in the VM ------------------===//
#include "vm/ListPrimitives.h"

#include "kernels/Error.h"
#include "kernels/ListPrimitiveSpec.h"
#include "vm/PackedList.h"

namespace rivet::vm {

namespace {

const ListObj &packed(const ObjectRef &L) {
  return *static_cast<const ListObj *>(L.get());
}

const Tensor &position(const ListPrimitiveArgs &Args, size_t I) {
  return asTensor(Args[I], "position");
}

ObjectRef listLength(const ListPrimitiveArgs &Args) {
  size_t N = 0;
  if (const auto *L = Args[0] ? Args[0]->as<ListObj>() : nullptr)
    N = L->size();
  else
    forEachListElement(Args[0], "list_length", [&](const ObjectRef &) { ++N; });
  return makeTensor(Tensor::scalar<int64_t>((int64_t)N));
}

ObjectRef listAt(const ListPrimitiveArgs &Args) {
  ObjectRef Ref = toPackedList(Args[0], "list_at");
  const ListObj &L = packed(Ref);
  return L[listPosition("list_at", position(Args, 1), L.size(),
                        /*AtEnd=*/false)];
}

ObjectRef listInsert(const ListPrimitiveArgs &Args) {
  ObjectRef Ref = toPackedList(Args[0], "list_insert");
  const ListObj &L = packed(Ref);
  if (Args.N < 3)
    return L.appended(Args[1]);
  return L.inserted(
      listPosition("list_insert", position(Args, 2), L.size(), /*AtEnd=*/true),
      Args[1]);
}

ObjectRef listErase(const ListPrimitiveArgs &Args) {
  ObjectRef Ref = toPackedList(Args[0], "list_erase");
  const ListObj &L = packed(Ref);
  if (Args.N < 2) {
    if (L.size() == 0)
      fail("list_erase: the List is empty");
    return L.erased(L.size() - 1);
  }
  return L.erased(
      listPosition("list_erase", position(Args, 1), L.size(), /*AtEnd=*/false));
}

/// Each primitive by operator name.
struct PrimitiveEntry {
  std::string_view Name;
  ListPrimitive Fn;
};
constexpr PrimitiveEntry Primitives[] = {
    {"list_length", listLength},
    {"list_at", listAt},
    {"list_insert", listInsert},
    {"list_erase", listErase},
};

} // namespace

ListPrimitive findListPrimitive(std::string_view Op) {
  for (const PrimitiveEntry &P : Primitives)
    if (P.Name == Op)
      return P.Fn;
  return nullptr;
}

} // namespace rivet::vm
