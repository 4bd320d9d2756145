//===- Tensor.cc - Reference-counted dense tensors ------------------------===//
#include "kernels/Tensor.h"
#include "kernels/ElementConvert.h"

#include <dlpack/dlpack.h>

#include <cmath>
#include <cstdlib>

namespace rivet {

//===----------------------------------------------------------------------===//
// Storage
//===----------------------------------------------------------------------===//

std::shared_ptr<Storage> Storage::allocate(size_t NBytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; a
  // zero-byte request still gets a valid, unique pointer.
  size_t Rounded =
      (NBytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  if (Rounded < NBytes)
    fail("cannot allocate {} bytes: size overflows", NBytes);
  if (Rounded == 0)
    Rounded = kStorageAlignment;
  void *P = std::aligned_alloc(kStorageAlignment, Rounded);
  if (!P)
    fail("out of memory allocating {} bytes", NBytes);
  Storage::Releaser Free{[](void *, void *Data, size_t) { std::free(Data); },
                         nullptr, Rounded};
  return std::make_shared<Storage>(P, NBytes, Free);
}

std::shared_ptr<Storage> Storage::wrap(void *Data, size_t NBytes,
                                       std::function<void()> Release) {
  return std::shared_ptr<Storage>(
      new Storage(Data, NBytes, std::move(Release)));
}

Storage::~Storage() {
  if (Block.fn)
    Block.fn(Block.owner, Data, Block.capacity);
  else if (Release)
    Release();
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor(std::shared_ptr<Storage> S, size_t ByteOffset, Shape Shp,
               DType T)
    : Store(std::move(S)), Offset(ByteOffset), Sh(std::move(Shp)), Dt(T) {
  size_t Need = (size_t)numElements(Sh) * dtypeSize(T);
  if (Store && (Offset > Store->size() || Store->size() - Offset < Need))
    fail("tensor {} at byte offset {} does not fit in storage of {} bytes",
         typeString(), Offset, Store->size());
}

Tensor Tensor::empty(const Shape &Sh, DType T) {
  size_t N = (size_t)numElements(Sh);
  if (N > SIZE_MAX / dtypeSize(T))
    fail("tensor of shape {} is too large", shapeToString(Sh));
  Tensor R(Storage::allocate(N * dtypeSize(T)), 0, Sh, T);
  if (isString(T) && N) // null handles: empty strings, never dangling
    std::memset(R.rawData(), 0, R.nbytes());
  return R;
}

Tensor Tensor::zeros(const Shape &Sh, DType T) {
  Tensor R = empty(Sh, T);
  std::memset(R.rawData(), 0, R.nbytes());
  return R;
}

Tensor Tensor::meta(const Shape &Sh, DType T) {
  numElements(Sh); // validates the extents
  return Tensor(nullptr, 0, Sh, T);
}

void Tensor::noData() const {
  if (!Dt)
    fail("access to the data of an undefined tensor");
  fail("tensor {} has no storage (meta tensor)", typeString());
}

Tensor Tensor::reshape(const Shape &NewShape) const {
  if (!Dt)
    fail("reshape of an undefined tensor");
  if (numElements(NewShape) != numel())
    fail("cannot reshape {} to {}: element counts differ", typeString(),
         shapeToString(NewShape));
  return Tensor(Store, Offset, NewShape, *Dt);
}

Tensor Tensor::clone() const {
  if (!Dt)
    return Tensor();
  if (!Store)
    return meta(Sh, *Dt);
  Tensor R = empty(Sh, *Dt);
  if (nbytes())
    std::memcpy(R.rawData(), rawData(), nbytes());
  return R;
}

/// Element I of a narrow-typed tensor: floats through float, integers
/// exactly.
template <typename T> T Tensor::narrowElement(int64_t I) const {
  uint8_t B = static_cast<const uint8_t *>(rawData())[I];
  if (dtypeInfo(dtype()).narrowFloat)
    return convertElement<T>(narrowToFloat(dtype(), B));
  return (T)narrowToInt(dtype(), B);
}

double Tensor::elementAsDouble(int64_t I) const {
  if (I < 0 || I >= numel())
    fail("element index {} out of range for {}", I, typeString());
  if (isNarrow(dtype()))
    return narrowElement<double>(I);
  return dispatchDType(dtype(), [&](auto Tag) -> double {
    using E = decltype(Tag);
    return convertElement<double>(static_cast<const E *>(rawData())[I]);
  });
}

int64_t Tensor::elementAsInt(int64_t I) const {
  if (I < 0 || I >= numel())
    fail("element index {} out of range for {}", I, typeString());
  if (isNarrow(dtype()))
    return narrowElement<int64_t>(I);
  return dispatchDType(dtype(), [&](auto Tag) -> int64_t {
    using E = decltype(Tag);
    return convertElement<int64_t>(static_cast<const E *>(rawData())[I]);
  });
}

std::vector<int64_t> Tensor::toIntVector() const {
  std::vector<int64_t> R((size_t)numel());
  if (isNarrow(dtype())) {
    for (size_t I = 0; I < R.size(); ++I)
      R[I] = narrowElement<int64_t>((int64_t)I);
    return R;
  }
  dispatchDType(dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    const E *P = static_cast<const E *>(rawData());
    for (size_t I = 0; I < R.size(); ++I)
      R[I] = convertElement<int64_t>(P[I]);
  });
  return R;
}

std::vector<double> Tensor::toDoubleVector() const {
  std::vector<double> R((size_t)numel());
  if (isNarrow(dtype())) {
    for (size_t I = 0; I < R.size(); ++I)
      R[I] = narrowElement<double>((int64_t)I);
    return R;
  }
  dispatchDType(dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    const E *P = static_cast<const E *>(rawData());
    for (size_t I = 0; I < R.size(); ++I)
      R[I] = convertElement<double>(P[I]);
  });
  return R;
}

Tensor Tensor::cast(DType To) const {
  if (!Dt)
    fail("cast of an undefined tensor");
  if (!Store)
    return meta(Sh, To);
  Tensor R = empty(Sh, To);
  convertBuffer(rawData(), *Dt, R.rawData(), To, numel());
  return R;
}

std::string Tensor::typeString() const {
  if (!Dt)
    return "Tensor[undefined]";
  return fmt::format("Tensor[{}, {}]", shapeToString(Sh), dtypeName(*Dt));
}

bool allClose(const Tensor &Actual, const Tensor &Expected, double Rtol,
              double Atol) {
  if (!Actual.defined() || !Expected.defined())
    return Actual.defined() == Expected.defined();
  if (Actual.dtype() != Expected.dtype() || Actual.shape() != Expected.shape())
    return false;
  int64_t N = Actual.numel();
  if (isString(Actual.dtype())) // interned: equal text, equal handles
    return N == 0 || std::memcmp(Actual.rawData(), Expected.rawData(),
                                 Actual.nbytes()) == 0;
  for (int64_t I = 0; I < N; ++I) {
    double A = Actual.elementAsDouble(I), E = Expected.elementAsDouble(I);
    if (std::isnan(A) || std::isnan(E)) {
      if (std::isnan(A) != std::isnan(E))
        return false;
      continue;
    }
    if (A == E) // covers equal infinities
      continue;
    if (std::isinf(A) || std::isinf(E))
      return false;
    if (std::fabs(A - E) > Atol + Rtol * std::fabs(E))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// DLPack
//===----------------------------------------------------------------------===//

namespace {

// DLPack 0.6 has no bool code; later versions use 6 (kDLBool) with 8 bits,
// which is what we produce and accept.
constexpr uint8_t kDLBoolCode = 6;

// DLPack 1.1's codes of the 8-bit float types (the 4- and 2-bit types are
// packed in DLPack, unpacked here, so they have no exchange).
struct DLNarrowCode {
  uint8_t code;
  DType dtype;
};
constexpr DLNarrowCode kDLNarrowCodes[] = {{10, DType::Float8E4M3FN},
                                           {11, DType::Float8E4M3FNUZ},
                                           {12, DType::Float8E5M2},
                                           {13, DType::Float8E5M2FNUZ},
                                           {14, DType::Float8E8M0}};

DLDataType toDLDataType(DType T) {
  DLDataType D;
  D.lanes = 1;
  D.bits = (uint8_t)(dtypeSize(T) * 8);
  if (isNarrow(T)) {
    for (const DLNarrowCode &C : kDLNarrowCodes)
      if (C.dtype == T) {
        D.code = C.code;
        return D;
      }
    fail("DLPack: {} has no DLPack code for unpacked elements (cast it to "
         "int8 or float first)",
         dtypeName(T));
  }
  if (T == DType::Bool)
    D.code = kDLBoolCode;
  else if (T == DType::BFloat16)
    D.code = kDLBfloat;
  else if (isFloat(T))
    D.code = kDLFloat;
  else if (isInteger(T) && !isSigned(T))
    D.code = kDLUInt;
  else
    D.code = kDLInt;
  return D;
}

std::optional<DType> fromDLDataType(DLDataType D) {
  if (D.lanes != 1)
    return std::nullopt;
  for (const DLNarrowCode &C : kDLNarrowCodes)
    if (C.code == D.code)
      return D.bits == 8 ? std::optional<DType>(C.dtype) : std::nullopt;
  switch (D.code) {
  case kDLInt:
    switch (D.bits) {
    case 8: return DType::Int8;
    case 16: return DType::Int16;
    case 32: return DType::Int32;
    case 64: return DType::Int64;
    }
    break;
  case kDLUInt:
    switch (D.bits) {
    case 8: return DType::UInt8;
    case 16: return DType::UInt16;
    case 32: return DType::UInt32;
    case 64: return DType::UInt64;
    }
    break;
  case kDLBfloat:
    if (D.bits == 16)
      return DType::BFloat16;
    break;
  case kDLFloat:
    switch (D.bits) {
    case 16: return DType::Float16;
    case 32: return DType::Float32;
    case 64: return DType::Float64;
    }
    break;
  case kDLBoolCode:
    if (D.bits == 8)
      return DType::Bool;
    break;
  }
  return std::nullopt;
}

/// Owns what a DLManagedTensor produced by toDLPack points into.
struct DLPackContext {
  DLManagedTensor Managed;
  std::shared_ptr<Storage> Store;
  std::vector<int64_t> ShapeBuf;
};

void deleteDLPackContext(DLManagedTensor *M) {
  delete static_cast<DLPackContext *>(M->manager_ctx);
}

} // namespace

DLManagedTensor *Tensor::toDLPack() const {
  if (!Dt)
    fail("toDLPack: tensor is undefined");
  if (!Store)
    fail("toDLPack: tensor {} has no storage (meta tensor)", typeString());
  auto *Ctx = new DLPackContext();
  Ctx->Store = Store;
  Ctx->ShapeBuf = Sh;
  DLTensor &T = Ctx->Managed.dl_tensor;
  T.data = Store->data();
  T.device = DLDevice{kDLCPU, 0};
  T.ndim = (int)Sh.size();
  T.dtype = toDLDataType(*Dt);
  T.shape = Ctx->ShapeBuf.empty() ? nullptr : Ctx->ShapeBuf.data();
  T.strides = nullptr; // dense row-major
  T.byte_offset = Offset;
  Ctx->Managed.manager_ctx = Ctx;
  Ctx->Managed.deleter = deleteDLPackContext;
  return &Ctx->Managed;
}

Tensor Tensor::fromDLPack(DLManagedTensor *M) {
  if (!M)
    fail("fromDLPack: null DLManagedTensor");
  // We own M from here on: release it on every error path.
  bool Released = false;
  auto Release = [M, &Released] {
    if (!Released && M->deleter)
      M->deleter(M);
    Released = true;
  };
  const DLTensor &T = M->dl_tensor;
  try {
    if (T.device.device_type != kDLCPU && T.device.device_type != kDLCUDAHost)
      fail("fromDLPack: unsupported device type {} (only CPU memory is "
           "accepted)",
           (int)T.device.device_type);
    std::optional<DType> Dt = fromDLDataType(T.dtype);
    if (!Dt)
      fail("fromDLPack: unsupported dtype (code {}, bits {}, lanes {})",
           (int)T.dtype.code, (int)T.dtype.bits, (int)T.dtype.lanes);
    if (T.ndim < 0 || (T.ndim > 0 && !T.shape))
      fail("fromDLPack: invalid ndim {} or missing shape", T.ndim);
    Shape Sh(T.shape, T.shape + T.ndim);
    int64_t N = numElements(Sh);
    size_t ESize = dtypeSize(*Dt);
    if (N > 0 && !T.data)
      fail("fromDLPack: null data pointer for {} elements", N);
    const char *Base = static_cast<const char *>(T.data) + T.byte_offset;

    // Dense row-major when strides are absent or match contiguous strides
    // on every dimension of extent > 1.
    bool Dense = true;
    if (T.strides) {
      std::vector<int64_t> C = contiguousStrides(Sh);
      for (int I = 0; I < T.ndim; ++I)
        if (Sh[I] > 1 && T.strides[I] != C[I])
          Dense = false;
    }
    if (Dense) {
      size_t NBytes = (size_t)N * ESize;
      Released = true; // the Storage owns M now
      auto S = Storage::wrap(const_cast<char *>(Base), NBytes, [M] {
        if (M->deleter)
          M->deleter(M);
      });
      return Tensor(std::move(S), 0, Sh, *Dt);
    }
    // Strided: copy element by element, walking a multi-index.
    Tensor R = empty(Sh, *Dt);
    char *Dst = static_cast<char *>(R.rawData());
    std::vector<int64_t> Idx(T.ndim, 0);
    int64_t SrcOff = 0; // in elements
    for (int64_t E = 0; E < N; ++E) {
      std::memcpy(Dst + E * ESize, Base + SrcOff * (int64_t)ESize, ESize);
      for (int D = T.ndim - 1; D >= 0; --D) {
        if (++Idx[D] < Sh[D]) {
          SrcOff += T.strides[D];
          break;
        }
        SrcOff -= T.strides[D] * (Sh[D] - 1);
        Idx[D] = 0;
      }
    }
    Release();
    return R;
  } catch (...) {
    Release();
    throw;
  }
}

} // namespace rivet
