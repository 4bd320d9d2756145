//===- SharedObject.h - Link emitted kernels into a shared object -*- C++ -*-=//
//
// The ahead-of-time half of native kernels: the object file that
// emitObject() writes is linked by LLVM's ld.lld into an ELF shared object,
// which the .rvx embeds and the runtime loads without LLVM
// (vm::NativeLibrary). No LLVM library is involved here: the linker runs as
// a separate process in a private temporary directory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::codegen {

/// The ld.lld this process links with: $RIVET_LD_LLD when set (it must
/// exist), else the first of /usr/lib/llvm-16/bin/ld.lld,
/// /usr/bin/ld.lld-16 and ld.lld on $PATH. Throws rivet::Error naming every
/// place searched when there is none.
std::string findLinker();

/// Links an ELF relocatable object (position independent, as emitObject
/// writes it) into a shared object exporting its kernels:
///   ld.lld -shared --hash-style=gnu -z noexecstack -z now -z relro ...
/// For an object of the host's machine the C math library is linked as
/// needed (generated code calls expf, tanhf, ...); an object for another
/// target is linked with its math symbols left undefined, to be bound on
/// the machine that loads it. Throws rivet::Error with the linker's
/// diagnostics when linking fails.
std::vector<uint8_t> linkSharedObject(const std::vector<uint8_t> &Object);

} // namespace rivet::codegen
