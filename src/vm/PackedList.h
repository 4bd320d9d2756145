//===- PackedList.h - Lists stored as arrays --------------------*- C++ -*-===//
//
// The VM's second representation of a prelude List, beside Cons cells
// (ADTObj): the elements in one array. The List primitives
// (vm/ListPrimitives.h) and kernels that return a List make these; Cons and
// Nil still make cells. Whatever reads a List takes both
// (forEachListElement; GetTag and GetField see an array as a Cons cell).
// VirtualMachine::invoke packs its List arguments and returns Lists as Cons
// cells only, so callers see one representation.
//
// A List stays an immutable value although its array grows in place: an
// array (ListBuffer) only ever grows at its end, slots once written never
// change, and a List (ListObj) is a range [begin, end) of one array.
// Appending to a List whose range ends at the array's last written slot
// writes the next slot: O(1), amortized over a copy into an array twice as
// large when it is full; the other Lists on the array still see only their
// own ranges. Appending to any other List, inserting or erasing inside it,
// copies its elements into a new array: O(length). Dropping the first or
// the last element narrows the range: O(1). So a loop that carries a
// sequence and appends to it copies nothing per iteration, without knowing
// whether anything else still holds the older Lists (no uniqueness check),
// and a List read on several threads stays safe (slots are claimed
// atomically).
//
// An array also owns the arena (vm/TensorArena.h) where AllocListTensor
// places the tensors appended to its Lists, one after another, so that
// concat_list of what a loop appended is a view of them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Error.h"
#include "vm/Object.h"
#include "vm/TensorArena.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace rivet::vm {

/// The array of packed Lists: Capacity slots, of which the first `used` are
/// written.
class ListBuffer {
public:
  /// An array holding Elems, with room for Room elements in all.
  ListBuffer(std::vector<ObjectRef> Elems, size_t Room);
  ListBuffer(const ListBuffer &) = delete;
  ListBuffer &operator=(const ListBuffer &) = delete;

  const ObjectRef &operator[](size_t I) const { return Slots[I]; }
  /// Writes X into slot At when At is the first unwritten slot and there is
  /// room: the List that ends at At owns the array's end. False (X kept)
  /// otherwise. Two Lists ending at At on different threads cannot both
  /// succeed.
  bool tryAppend(size_t At, ObjectRef &X);

  /// Where tensors appended to Lists of this array are placed
  /// (AllocListTensor), or null: made on the first placement, taken from
  /// the first tensor appended that lies in one, passed on to the arrays
  /// copied from this one.
  std::shared_ptr<TensorArena> arena() const;
  void setArena(std::shared_ptr<TensorArena> A);

private:
  std::unique_ptr<ObjectRef[]> Slots;
  size_t Capacity;
  std::atomic<size_t> Used;
  mutable std::mutex ArenaLock;
  std::shared_ptr<TensorArena> Arena;
};

/// A List: elements [Begin, End) of a ListBuffer.
class ListObj : public Object {
public:
  static constexpr ObjectKind Kind = ObjectKind::List;
  ListObj(std::shared_ptr<ListBuffer> B, size_t Begin, size_t End)
      : Object(Kind), Buffer(std::move(B)), Begin(Begin), End(End) {}

  size_t size() const { return End - Begin; }
  const ObjectRef &operator[](size_t I) const { return (*Buffer)[Begin + I]; }

  /// This List with X after its last element: O(1) amortized when this List
  /// ends at its array's end, else a copy.
  ObjectRef appended(ObjectRef X) const;
  /// This List with X before element At (0 <= At <= size()).
  ObjectRef inserted(size_t At, ObjectRef X) const;
  /// This List without element At (0 <= At < size()): O(1) at either end.
  ObjectRef erased(size_t At) const;
  /// Elements [From, To) of this List, sharing its array.
  ObjectRef slice(size_t From, size_t To) const;
  /// Field Field of this List seen as its first Cons cell (GetField): the
  /// first element (0) or the rest of the List (1); a Nil has none.
  ObjectRef consField(int64_t Field) const;

  /// Storage of NBytes (aligned to Align) for a tensor about to be appended
  /// to this List, right after the tensors placed before it in the List's
  /// arena (AllocListTensor); null when no arena has room.
  std::shared_ptr<Storage> placeElement(size_t NBytes, size_t Align) const;

private:
  /// The elements in a new array (with room to double), X inserted before
  /// element At.
  ObjectRef copiedWith(size_t At, ObjectRef X) const;

  std::shared_ptr<ListBuffer> Buffer;
  size_t Begin, End;
};

/// A packed List of Elems, in a new array.
ObjectRef packedList(std::vector<ObjectRef> Elems);

/// List L (packed, or Cons cells: converted, O(length)) as a packed List;
/// throws rivet::Error naming What when L is not a List.
ObjectRef toPackedList(const ObjectRef &L, const char *What);

/// V with every packed List in it (in ADT fields and List elements, not in
/// closures) rebuilt as Cons cells of tags ConsTag and NilTag; V itself
/// when it holds none. What VirtualMachine::invoke returns.
ObjectRef withConsCells(const ObjectRef &V, int32_t ConsTag, int32_t NilTag);

/// V packed when it is a List of Cons cells (its tag ConsTag or NilTag),
/// else V: what VirtualMachine::invoke passes on of its arguments, so that
/// the List primitives read an argument List in O(1).
ObjectRef packedIfList(const ObjectRef &V, int32_t ConsTag, int32_t NilTag);

/// Calls F(const ObjectRef &) on each element of List L, packed or Cons
/// cells, in order; throws rivet::Error naming What when L is not a List.
template <typename Fn>
void forEachListElement(const ObjectRef &L, const char *What, Fn F) {
  if (const auto *P = L ? L->as<ListObj>() : nullptr) {
    for (size_t I = 0; I < P->size(); ++I)
      F((*P)[I]);
    return;
  }
  const ObjectRef *Cell = &L;
  for (;;) {
    const auto *A = *Cell ? (*Cell)->as<ADTObj>() : nullptr;
    if (A && A->tag != ADTObj::kTupleTag && A->fields.size() == 2) {
      F(A->fields[0]);
      Cell = &A->fields[1];
    } else if (A && A->tag != ADTObj::kTupleTag && A->fields.empty()) {
      return;
    } else if (const auto *Rest = *Cell ? (*Cell)->as<ListObj>() : nullptr) {
      // A Cons cell's tail may be packed (Cons(x, l) of a packed l).
      for (size_t I = 0; I < Rest->size(); ++I)
        F((*Rest)[I]);
      return;
    } else {
      fail("{}: expected a List", What);
    }
  }
}

/// Elements this process has copied from one List into a new array
/// (conversions from Cons cells, copies of Lists that do not own their
/// array's end, growth): tests check that a loop building a List copies
/// O(1) amortized per step.
uint64_t packedListElementsCopied();

} // namespace rivet::vm
