//===- ReleasedGil.h - The GIL released, Python references kept -*- C++ -*-===//
//
// Tensors over Python-owned memory (a NumPy input) hold a reference to the
// owner, and the VM drops them while the GIL is released. Taking the GIL for
// each drop costs more than a tiny model's whole run, so a drop inside a
// ReleasedGil scope on the same thread is deferred to the scope's end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <Python.h>

#include <memory>

namespace rivet::python {

/// Storage over NBytes at Data, which Owner (a Python object) keeps alive:
/// takes a reference to Owner and drops it when the storage dies, at once if
/// the dying thread holds the GIL, at the end of its ReleasedGil scope if it
/// is inside one, else after taking the GIL. Call with the GIL held.
std::shared_ptr<Storage> storageOwnedBy(PyObject *Owner, void *Data,
                                        size_t NBytes);

/// Releases the GIL for its lifetime (as nb::gil_scoped_release does); the
/// references that storageOwnedBy storages drop meanwhile on this thread
/// are dropped when it ends, with the GIL back.
class ReleasedGil {
public:
  ReleasedGil();
  ~ReleasedGil();
  ReleasedGil(const ReleasedGil &) = delete;
  ReleasedGil &operator=(const ReleasedGil &) = delete;

private:
  PyThreadState *State;
  bool Outermost;
};

} // namespace rivet::python
