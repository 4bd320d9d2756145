//===- Tensor.h - Reference-counted dense tensors ---------------*- C++ -*-===//
//
// A Tensor is a view (byte offset, shape, dtype) on reference-counted Storage.
// Tensors are always dense and row-major; kernels may assume it. A Tensor
// without storage carries only its shape and dtype ("meta tensor"), which is
// what data-independent shape functions receive.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/DType.h"
#include "kernels/Device.h"
#include "kernels/Error.h"
#include "kernels/Shape.h"

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

struct DLManagedTensor;

namespace rivet {

/// Alignment of every Storage buffer, in bytes.
inline constexpr size_t kStorageAlignment = 64;

/// A 64-byte aligned byte buffer. Owns its memory unless created over
/// external memory (a memory-mapped file, a DLPack tensor), in which case the
/// deleter releases it.
class Storage {
public:
  /// Gives a block back to its owner (a pool, the C heap) when the last
  /// reference dies: a plain function pointer rather than a std::function so
  /// that a pooled or heap buffer costs no allocation besides the Storage.
  struct Releaser {
    void (*fn)(void *Owner, void *Data, size_t Capacity) = nullptr;
    void *owner = nullptr;
    size_t capacity = 0; // the block's size as its owner knows it
  };

  /// Allocates NBytes of uninitialized, 64-byte aligned memory.
  static std::shared_ptr<Storage> allocate(size_t NBytes);
  /// Wraps external memory; Release runs when the last reference dies.
  static std::shared_ptr<Storage> wrap(void *Data, size_t NBytes,
                                       std::function<void()> Release);
  /// A buffer of NBytes at Data that R gives back. Public so that it can be
  /// made in place (std::make_shared, or inside a larger object).
  Storage(void *Data, size_t NBytes, Releaser R, Device D = Device::CPU)
      : Data(Data), NBytes(NBytes), Block(R), Dev(D) {}
  ~Storage();
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;

  void *data() const { return Data; }
  size_t size() const { return NBytes; }
  /// Where Data lives: only that device's code may dereference it.
  Device device() const { return Dev; }
  /// How the block goes back to its owner (an owner recognizes its blocks).
  const Releaser &releaser() const { return Block; }
  /// Marks the bytes as never written again while the storage lives (an
  /// executable's constants): a kernel may key what it derives from them
  /// (packed weights) by the storage alone, without comparing the bytes.
  void markImmutable() { Immutable.store(true, std::memory_order_relaxed); }
  bool immutable() const { return Immutable.load(std::memory_order_relaxed); }

private:
  Storage(void *Data, size_t NBytes, std::function<void()> Release)
      : Data(Data), NBytes(NBytes), Release(std::move(Release)) {}
  void *Data;
  size_t NBytes;
  std::function<void()> Release;
  Releaser Block;
  Device Dev = Device::CPU;
  std::atomic<bool> Immutable{false};
};

class Tensor {
public:
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> S, size_t ByteOffset, Shape Sh, DType T);

  /// A new uninitialized tensor.
  static Tensor empty(const Shape &Sh, DType T);
  /// A new zero-filled tensor.
  static Tensor zeros(const Shape &Sh, DType T);
  /// A tensor with shape and dtype but no storage.
  static Tensor meta(const Shape &Sh, DType T);
  /// A tensor holding a copy of Values with the given shape.
  template <typename E>
  static Tensor fromVector(const std::vector<E> &Values, const Shape &Sh) {
    Tensor R = empty(Sh, dtypeOf<E>());
    RIVET_CHECK((int64_t)Values.size() == R.numel(),
                "fromVector: {} values for shape {}", Values.size(),
                shapeToString(Sh));
    if constexpr (std::is_same_v<E, bool>) {
      // std::vector<bool> is bit-packed: copy element by element.
      bool *P = static_cast<bool *>(R.rawData());
      for (size_t I = 0; I < Values.size(); ++I)
        P[I] = Values[I];
    } else if (!Values.empty()) {
      std::memcpy(R.rawData(), Values.data(), R.nbytes());
    }
    return R;
  }
  template <typename E> static Tensor scalar(E Value) {
    return fromVector<E>({Value}, {});
  }

  bool defined() const { return Dt.has_value(); }
  bool hasData() const { return Store != nullptr; }
  DType dtype() const { return *Dt; }
  const Shape &shape() const { return Sh; }
  int64_t rank() const { return (int64_t)Sh.size(); }
  int64_t dim(int64_t I) const { return Sh[normalizeAxis(I, rank())]; }
  /// The shape was validated when the tensor was made, so no overflow check.
  int64_t numel() const {
    int64_t N = 1;
    for (int64_t D : Sh)
      N *= D;
    return N;
  }
  size_t nbytes() const { return (size_t)numel() * dtypeSize(*Dt); }

  /// Inline: kernels and the VM call it for every operand.
  void *rawData() const {
    if (!Store) [[unlikely]]
      noData();
    return static_cast<char *>(Store->data()) + Offset;
  }
  template <typename E> E *data() const {
    RIVET_CHECK(dtypeOf<E>() == *Dt, "tensor has dtype {}, accessed as {}",
                dtypeName(*Dt), dtypeName(dtypeOf<E>()));
    return static_cast<E *>(rawData());
  }
  const std::shared_ptr<Storage> &storage() const { return Store; }
  /// The storage's device (the CPU for a meta tensor).
  Device device() const { return Store ? Store->device() : Device::CPU; }
  size_t byteOffset() const { return Offset; }
  /// Drops the reference to the storage, keeping shape and dtype (the tensor
  /// becomes a meta tensor). Lets a reused argument buffer give memory back
  /// without freeing its shape.
  void releaseStorage() {
    Store.reset();
    Offset = 0;
  }

  /// Same storage, new shape with the same number of elements.
  Tensor reshape(const Shape &NewShape) const;
  /// A deep copy into fresh storage.
  Tensor clone() const;
  /// Element I (row-major) converted to double / int64; for tests and shape
  /// code.
  double elementAsDouble(int64_t I) const;
  int64_t elementAsInt(int64_t I) const;
  /// All elements converted to int64 (shape tensors, axes).
  std::vector<int64_t> toIntVector() const;
  std::vector<double> toDoubleVector() const;
  /// A copy converted to another dtype (C++ conversion rules; float->int
  /// truncates).
  Tensor cast(DType To) const;
  /// "Tensor[(2, 3), float32]"
  std::string typeString() const;

  /// DLPack interop. toDLPack shares storage (the capsule keeps it alive);
  /// fromDLPack takes ownership of the managed tensor and copies only when it
  /// is not dense row-major.
  DLManagedTensor *toDLPack() const;
  static Tensor fromDLPack(DLManagedTensor *M);

private:
  [[noreturn]] void noData() const;
  template <typename T> T narrowElement(int64_t I) const;
  std::shared_ptr<Storage> Store;
  size_t Offset = 0;
  Shape Sh;
  std::optional<DType> Dt;
};

/// True when shapes and dtypes match and every element is within
/// atol + rtol * |expected| (NaNs must match NaNs). Used by tests and `check`.
bool allClose(const Tensor &Actual, const Tensor &Expected, double Rtol = 1e-5,
              double Atol = 1e-6);

} // namespace rivet
