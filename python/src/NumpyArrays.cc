//===- NumpyArrays.cc - NumPy arrays to tensors and back, no copy ---------===//
#include "NumpyArrays.h"

#include "ReleasedGil.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace rivet::python {
namespace {

bool NumpyImported = false;

/// The NumPy type number of each dtype both have; -1 for the others.
int numpyTypeOf(DType T) {
  switch (T) {
  case DType::Bool: return NPY_BOOL;
  case DType::Int8: return NPY_INT8;
  case DType::Int16: return NPY_INT16;
  case DType::Int32: return NPY_INT32;
  case DType::Int64: return NPY_INT64;
  case DType::UInt8: return NPY_UINT8;
  case DType::UInt16: return NPY_UINT16;
  case DType::UInt32: return NPY_UINT32;
  case DType::UInt64: return NPY_UINT64;
  case DType::Float16: return NPY_FLOAT16;
  case DType::Float32: return NPY_FLOAT32;
  case DType::Float64: return NPY_FLOAT64;
  default: return -1;
  }
}

/// The dtype of a NumPy array's elements, by kind and size (NumPy has two
/// type numbers for 64-bit integers: long and long long).
std::optional<DType> dtypeOfArray(PyArrayObject *A) {
  size_t Size = (size_t)PyArray_ITEMSIZE(A);
  auto BySize = [&](DType B8, DType B16, DType B32,
                    DType B64) -> std::optional<DType> {
    switch (Size) {
    case 1: return B8;
    case 2: return B16;
    case 4: return B32;
    case 8: return B64;
    default: return std::nullopt;
    }
  };
  switch (PyArray_DESCR(A)->kind) {
  case 'b': return Size == 1 ? std::optional(DType::Bool) : std::nullopt;
  case 'i':
    return BySize(DType::Int8, DType::Int16, DType::Int32, DType::Int64);
  case 'u':
    return BySize(DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64);
  case 'f':
    return Size == 1 ? std::nullopt
                     : BySize(DType::Bool, DType::Float16, DType::Float32,
                              DType::Float64);
  default: return std::nullopt;
  }
}

/// The base object of an array over a tensor: holds its storage.
void dropStorageCapsule(PyObject *Cap) {
  delete static_cast<std::shared_ptr<Storage> *>(
      PyCapsule_GetPointer(Cap, "rivet.storage"));
}

} // namespace

bool importNumpyApi() {
  if (NumpyImported)
    return true;
  if (_import_array() < 0) {
    PyErr_Clear();
    return false;
  }
  NumpyImported = true;
  return true;
}

std::optional<Tensor> tensorOverNumpy(PyObject *Obj) {
  if (!NumpyImported || !PyArray_Check(Obj))
    return std::nullopt;
  auto *A = reinterpret_cast<PyArrayObject *>(Obj);
  if (!PyArray_IS_C_CONTIGUOUS(A) || !PyArray_ISALIGNED(A) ||
      !PyArray_ISNOTSWAPPED(A))
    return std::nullopt;
  std::optional<DType> T = dtypeOfArray(A);
  if (!T)
    return std::nullopt;
  int Rank = PyArray_NDIM(A);
  const npy_intp *Dims = PyArray_DIMS(A);
  Shape Sh(Dims, Dims + Rank);
  size_t NBytes = (size_t)PyArray_NBYTES(A);
  return Tensor(storageOwnedBy(Obj, PyArray_DATA(A), NBytes), 0, std::move(Sh),
                *T);
}

PyObject *numpyOverTensor(const Tensor &T) {
  int Type = numpyTypeOf(T.dtype());
  if (!NumpyImported || Type < 0 || T.device() != Device::CPU)
    return nullptr;
  const Shape &Sh = T.shape();
  npy_intp Dims[NPY_MAXDIMS];
  if (Sh.size() > NPY_MAXDIMS)
    return nullptr;
  for (size_t I = 0; I < Sh.size(); ++I)
    Dims[I] = (npy_intp)Sh[I];
  if (!T.hasData()) // no elements: NumPy allocates its own (empty) buffer
    return PyArray_SimpleNew((int)Sh.size(), Dims, Type);
  PyObject *Arr =
      PyArray_New(&PyArray_Type, (int)Sh.size(), Dims, Type, nullptr,
                  T.rawData(), 0, NPY_ARRAY_CARRAY, nullptr);
  if (!Arr)
    return nullptr;
  auto *Hold = new std::shared_ptr<Storage>(T.storage());
  PyObject *Base = PyCapsule_New(Hold, "rivet.storage", dropStorageCapsule);
  if (!Base) {
    delete Hold;
    Py_DECREF(Arr);
    return nullptr;
  }
  // Steals Base, even when it fails.
  if (PyArray_SetBaseObject((PyArrayObject *)Arr, Base) < 0) {
    Py_DECREF(Arr);
    return nullptr;
  }
  return Arr;
}

} // namespace rivet::python
