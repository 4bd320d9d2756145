//===- PackedList.cc - Lists stored as arrays -----------------------------===//
#include "vm/PackedList.h"

#include <algorithm>

namespace rivet::vm {

namespace {

std::atomic<uint64_t> ElementsCopied{0};

/// The capacity of a new array for Size elements: room to double, so that
/// appends in place pay for the copy.
size_t grownCapacity(size_t Size) { return std::max<size_t>(4, 2 * Size); }

} // namespace

uint64_t packedListElementsCopied() {
  return ElementsCopied.load(std::memory_order_relaxed);
}

ListBuffer::ListBuffer(std::vector<ObjectRef> Elems, size_t Room)
    : Slots(new ObjectRef[std::max({Room, Elems.size(), size_t(1)})]),
      Capacity(std::max(Room, Elems.size())), Used(Elems.size()) {
  std::move(Elems.begin(), Elems.end(), Slots.get());
}

bool ListBuffer::tryAppend(size_t At, ObjectRef &X) {
  if (At >= Capacity)
    return false;
  size_t Expected = At;
  // Claims slot At; nobody reads it before the List that ends past it
  // exists, which this thread makes after writing it.
  if (!Used.compare_exchange_strong(Expected, At + 1,
                                    std::memory_order_acq_rel))
    return false;
  Slots[At] = std::move(X);
  return true;
}

std::shared_ptr<TensorArena> ListBuffer::arena() const {
  std::lock_guard<std::mutex> Guard(ArenaLock);
  return Arena;
}

void ListBuffer::setArena(std::shared_ptr<TensorArena> A) {
  std::lock_guard<std::mutex> Guard(ArenaLock);
  Arena = std::move(A);
}

namespace {

/// The arena tensor X lies in, or null.
TensorArena *arenaOf(const ObjectRef &X) {
  const auto *T = X ? X->as<TensorObj>() : nullptr;
  if (!T || !T->value.hasData())
    return nullptr;
  return TensorArena::owning(*T->value.storage());
}

} // namespace

ObjectRef ListObj::copiedWith(size_t At, ObjectRef X) const {
  std::vector<ObjectRef> Elems;
  Elems.reserve(size() + 1);
  for (size_t I = 0; I < At; ++I)
    Elems.push_back((*this)[I]);
  Elems.push_back(std::move(X));
  for (size_t I = At; I < size(); ++I)
    Elems.push_back((*this)[I]);
  ElementsCopied.fetch_add(size(), std::memory_order_relaxed);
  ObjectRef L = packedList(std::move(Elems));
  static_cast<const ListObj *>(L.get())->Buffer->setArena(Buffer->arena());
  return L;
}

ObjectRef ListObj::appended(ObjectRef X) const {
  // The first tensor appended that was placed in an arena (for an empty
  // List of Cons cells, AllocListTensor made one) gives the array its
  // arena, so the next placements follow it.
  if (TensorArena *A = arenaOf(X); A && !Buffer->arena())
    Buffer->setArena(A->shared_from_this());
  if (Buffer->tryAppend(End, X))
    return std::make_shared<ListObj>(Buffer, Begin, End + 1);
  return copiedWith(size(), std::move(X));
}

std::shared_ptr<Storage> ListObj::placeElement(size_t NBytes,
                                               size_t Align) const {
  if (std::shared_ptr<TensorArena> A = Buffer->arena())
    if (std::shared_ptr<Storage> S = A->claim(NBytes, Align))
      return S;
  // None yet, or the arena is full or mostly dead: another one.
  std::shared_ptr<TensorArena> A = TensorArena::create();
  if (!A)
    return nullptr;
  Buffer->setArena(A);
  return A->claim(NBytes, Align);
}

ObjectRef ListObj::inserted(size_t At, ObjectRef X) const {
  if (At == size())
    return appended(std::move(X));
  return copiedWith(At, std::move(X));
}

ObjectRef ListObj::erased(size_t At) const {
  if (At == 0)
    return slice(1, size());
  if (At + 1 == size())
    return slice(0, size() - 1);
  std::vector<ObjectRef> Elems;
  Elems.reserve(size() - 1);
  for (size_t I = 0; I < size(); ++I)
    if (I != At)
      Elems.push_back((*this)[I]);
  ElementsCopied.fetch_add(Elems.size(), std::memory_order_relaxed);
  return packedList(std::move(Elems));
}

ObjectRef ListObj::slice(size_t From, size_t To) const {
  return std::make_shared<ListObj>(Buffer, Begin + From, Begin + To);
}

ObjectRef ListObj::consField(int64_t Field) const {
  if (size() == 0 || Field < 0 || Field > 1)
    fail("field {} of a value with {} fields", Field, size() == 0 ? 0 : 2);
  return Field == 0 ? (*this)[0] : slice(1, size());
}

ObjectRef packedList(std::vector<ObjectRef> Elems) {
  size_t N = Elems.size();
  return std::make_shared<ListObj>(
      std::make_shared<ListBuffer>(std::move(Elems), grownCapacity(N)), 0, N);
}

ObjectRef toPackedList(const ObjectRef &L, const char *What) {
  if (L && L->kind == ObjectKind::List)
    return L;
  std::vector<ObjectRef> Elems;
  forEachListElement(L, What, [&](const ObjectRef &E) { Elems.push_back(E); });
  ElementsCopied.fetch_add(Elems.size(), std::memory_order_relaxed);
  return packedList(std::move(Elems));
}

namespace {

/// Whether V holds a packed List, looked for without recursion (a result
/// may be a List of a million Cons cells).
bool holdsPackedList(const ObjectRef &V) {
  std::vector<const Object *> Work{V.get()};
  while (!Work.empty()) {
    const Object *O = Work.back();
    Work.pop_back();
    if (!O)
      continue;
    if (O->kind == ObjectKind::List)
      return true;
    if (const auto *A = O->as<ADTObj>())
      for (const ObjectRef &F : A->fields)
        Work.push_back(F.get());
  }
  return false;
}

} // namespace

ObjectRef packedIfList(const ObjectRef &V, int32_t ConsTag, int32_t NilTag) {
  const auto *A = V ? V->as<ADTObj>() : nullptr;
  if (!A || A->tag < 0 || (A->tag != ConsTag && A->tag != NilTag))
    return V;
  return toPackedList(V, "argument");
}

ObjectRef withConsCells(const ObjectRef &V, int32_t ConsTag, int32_t NilTag) {
  if (!V || !holdsPackedList(V))
    return V;
  if (ConsTag < 0 || NilTag < 0)
    fail("the result holds a List, but the executable has no Cons/Nil "
         "constructors");
  if (const auto *L = V->as<ListObj>()) {
    ObjectRef Cells =
        std::make_shared<ADTObj>(NilTag, std::vector<ObjectRef>{});
    for (size_t I = L->size(); I-- > 0;)
      Cells = std::make_shared<ADTObj>(
          ConsTag, std::vector<ObjectRef>{
                       withConsCells((*L)[I], ConsTag, NilTag), Cells});
    return Cells;
  }
  // An ADT value: the chain of cells through their last fields (a List's
  // spine) is rebuilt innermost first, without recursion along it.
  std::vector<const ADTObj *> Spine;
  for (const Object *O = V.get(); O && O->kind == ObjectKind::ADT;) {
    const auto *A = static_cast<const ADTObj *>(O);
    Spine.push_back(A);
    O = A->fields.empty() ? nullptr : A->fields.back().get();
  }
  const ADTObj &Inner = *Spine.back();
  ObjectRef Tail = Inner.fields.empty()
                       ? nullptr
                       : withConsCells(Inner.fields.back(), ConsTag, NilTag);
  for (auto It = Spine.rbegin(); It != Spine.rend(); ++It) {
    const ADTObj &Cell = **It;
    std::vector<ObjectRef> Fields;
    for (size_t I = 0; I + 1 < Cell.fields.size(); ++I)
      Fields.push_back(withConsCells(Cell.fields[I], ConsTag, NilTag));
    if (!Cell.fields.empty())
      Fields.push_back(Tail);
    Tail = std::make_shared<ADTObj>(Cell.tag, std::move(Fields));
  }
  return Tail;
}

} // namespace rivet::vm
