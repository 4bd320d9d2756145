//===- ReleasedGil.cc - The GIL released, Python references kept ----------===//
#include "ReleasedGil.h"

#include <vector>

namespace rivet::python {
namespace {

/// Whether this thread is in a ReleasedGil scope, and the references
/// dropped there (kept between scopes: no allocation per call).
thread_local bool InReleasedGil = false;
thread_local std::vector<PyObject *> DeferredDecrefs;

void dropOwnerReference(void *Owner, void *, size_t) {
  auto *O = static_cast<PyObject *>(Owner);
  if (InReleasedGil) {
    DeferredDecrefs.push_back(O);
    return;
  }
  if (PyGILState_Check()) {
    Py_DECREF(O);
    return;
  }
  PyGILState_STATE S = PyGILState_Ensure();
  Py_DECREF(O);
  PyGILState_Release(S);
}

} // namespace

std::shared_ptr<Storage> storageOwnedBy(PyObject *Owner, void *Data,
                                        size_t NBytes) {
  Py_INCREF(Owner);
  return std::make_shared<Storage>(
      Data, NBytes, Storage::Releaser{dropOwnerReference, Owner, NBytes});
}

ReleasedGil::ReleasedGil() : Outermost(!InReleasedGil) {
  InReleasedGil = true;
  State = PyEval_SaveThread();
}

ReleasedGil::~ReleasedGil() {
  PyEval_RestoreThread(State);
  if (!Outermost)
    return;
  InReleasedGil = false;
  // A decref may run a destructor that drops more storages: they see the
  // GIL held and go at once, but take the list out first all the same.
  std::vector<PyObject *> Drop;
  Drop.swap(DeferredDecrefs);
  for (PyObject *O : Drop)
    Py_DECREF(O);
  Drop.clear();
  if (DeferredDecrefs.empty())
    Drop.swap(DeferredDecrefs); // keep the capacity for the next scope
}

} // namespace rivet::python
