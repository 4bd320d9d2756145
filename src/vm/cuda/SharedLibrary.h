//===- SharedLibrary.h - CUDA libraries opened with dlopen ------*- C++ -*-===//
//
// cuBLAS and cuDNN are loaded on first use, like the driver, so that the
// runtime starts where they are absent: a library that does not load makes
// its kernels fall back, with the reason kept for messages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <initializer_list>
#include <string>

#include <dlfcn.h>

namespace rivet::vm::cuda {

/// The first of Names that dlopen loads (never closed: handles made from it
/// may be released at exit); null with Why saying what failed.
inline void *openLibrary(std::initializer_list<const char *> Names,
                         std::string &Why) {
  for (const char *N : Names)
    if (void *L = dlopen(N, RTLD_NOW | RTLD_LOCAL))
      return L;
  const char *E = dlerror();
  Why = E ? E : "cannot be loaded";
  return nullptr;
}

/// Fn = the symbol Symbol of Lib (named LibName in Why when absent).
template <typename F>
bool resolveSymbol(void *Lib, const char *LibName, const char *Symbol, F &Fn,
                   std::string &Why) {
  Fn = reinterpret_cast<F>(dlsym(Lib, Symbol));
  if (!Fn)
    Why = std::string(LibName) + " has no " + Symbol;
  return Fn != nullptr;
}

} // namespace rivet::vm::cuda
