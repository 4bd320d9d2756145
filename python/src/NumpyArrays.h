//===- NumpyArrays.h - NumPy arrays to tensors and back, no copy -*- C++
//-*-===//
//
// The fast path of InferenceSession.run, through NumPy's C API: a NumPy input
// becomes a tensor over its memory, and a result a NumPy array over the
// tensor's memory, without a DLPack capsule or a numpy.asarray call per
// array. What NumPy cannot hold natively (bfloat16, the narrow types,
// strings) and what is not a plain NumPy array take the general path
// (nanobind's ndarray) in rivet_ext.cc.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <Python.h>

#include <optional>

namespace rivet::python {

/// Imports NumPy's C API (once); false, with the Python error cleared, if
/// NumPy cannot be imported: the general path still works then.
bool importNumpyApi();

/// A tensor over the memory of Obj if it is a C-contiguous, aligned,
/// native-byte-order NumPy array of a dtype rivet shares with NumPy, keeping
/// Obj alive (storageOwnedBy); nullopt for anything else.
std::optional<Tensor> tensorOverNumpy(PyObject *Obj);

/// A new reference to a NumPy array over T's memory that keeps T's storage
/// alive; nullptr (no Python error) if T is not on the CPU or its dtype has
/// no NumPy equivalent, or on a Python error (set).
PyObject *numpyOverTensor(const Tensor &T);

} // namespace rivet::python
