//===- Object.h - Run-time values of the VM ---------------------*- C++ -*-===//
//
// What a VM register holds: a tensor, an ADT value (also tuples: tag 0, no
// constructor), a List stored as an array (vm/PackedList.h; a List may also
// be Cons cells, ADT values), a closure or a storage buffer. Objects are
// immutable and shared; a register copy is one reference-count increment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace rivet::vm {

enum class ObjectKind : uint8_t { Tensor, ADT, Closure, Storage, List };

class Object;
using ObjectRef = std::shared_ptr<const Object>;

class Object {
public:
  const ObjectKind kind;
  virtual ~Object() = default;
  template <typename T> const T *as() const {
    return kind == T::Kind ? static_cast<const T *>(this) : nullptr;
  }

protected:
  explicit Object(ObjectKind K) : kind(K) {}
};

class TensorObj : public Object {
public:
  static constexpr ObjectKind Kind = ObjectKind::Tensor;
  Tensor value;
  explicit TensorObj(Tensor T) : Object(Kind), value(std::move(T)) {}
};

/// A constructed ADT value or a tuple. tag indexes the executable's
/// constructor table; tuples use kTupleTag.
class ADTObj : public Object {
public:
  static constexpr ObjectKind Kind = ObjectKind::ADT;
  static constexpr int32_t kTupleTag = -1;
  int32_t tag;
  std::vector<ObjectRef> fields;
  ADTObj(int32_t Tag, std::vector<ObjectRef> F)
      : Object(Kind), tag(Tag), fields(std::move(F)) {}
  /// Releases long chains (a List of a million elements) iteratively.
  ~ADTObj() override;
};

/// A function of the executable with the values it captured; calling it
/// passes the captured values first, then the arguments.
class ClosureObj : public Object {
public:
  static constexpr ObjectKind Kind = ObjectKind::Closure;
  uint32_t func;
  std::vector<ObjectRef> captured;
  ClosureObj(uint32_t F, std::vector<ObjectRef> C)
      : Object(Kind), func(F), captured(std::move(C)) {}
};

/// A storage buffer from which AllocTensor carves tensors. The Storage lives
/// inside the object (one allocation); tensors share it through share().
class StorageObj : public Object {
public:
  static constexpr ObjectKind Kind = ObjectKind::Storage;
  Storage storage;
  StorageObj(void *Data, size_t NBytes, Storage::Releaser R,
             Device D = Device::CPU)
      : Object(Kind), storage(Data, NBytes, R, D) {}
  /// The storage as tensors hold it: it keeps Self, the object, alive.
  static std::shared_ptr<Storage> share(const ObjectRef &Self) {
    const auto *S = static_cast<const StorageObj *>(Self.get());
    return std::shared_ptr<Storage>(Self, const_cast<Storage *>(&S->storage));
  }
};

inline ObjectRef makeTensor(Tensor T) {
  return std::make_shared<TensorObj>(std::move(T));
}
/// Throws rivet::Error: O, given as What, is not a tensor.
[[noreturn]] void failNotTensor(const ObjectRef &O, const char *What);
/// The tensor in O; throws rivet::Error naming What otherwise. Inline: the
/// VM reads every kernel operand through it.
inline const Tensor &asTensor(const ObjectRef &O, const char *What) {
  if (O && O->kind == ObjectKind::Tensor) [[likely]]
    return static_cast<const TensorObj *>(O.get())->value;
  failNotTensor(O, What);
}

/// The ADT value or tuple in O; throws rivet::Error naming What otherwise.
const ADTObj &asADT(const ObjectRef &O, const char *What);
/// An int64 1-D tensor holding the extents of S.
inline ObjectRef shapeTensor(const Shape &S) {
  return makeTensor(Tensor::fromVector<int64_t>(S, {(int64_t)S.size()}));
}

} // namespace rivet::vm
