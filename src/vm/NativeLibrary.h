//===- NativeLibrary.h - Generated kernels loaded from memory ---*- C++ -*-===//
//
// The run-time half of native kernels: the ELF shared object that
// codegen::linkSharedObject produced (embedded in the .rvx) is loaded from
// memory with the C library's dynamic loader only (memfd_create + dlopen; no
// LLVM). The bytes are validated before dlopen sees them, so a corrupt
// object is a rivet::Error rather than a crash inside the loader.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace rivet::vm {

class NativeLibrary {
public:
  /// Validates SharedObject (see validate) and loads it with RTLD_NOW |
  /// RTLD_LOCAL from an anonymous memory file (a private temporary file
  /// where memfd_create is unavailable). What names the bytes in messages
  /// ("model.rvx: native code"). Throws rivet::Error when they are refused
  /// or the loader fails.
  static std::shared_ptr<NativeLibrary>
  load(std::span<const uint8_t> SharedObject, const std::string &What);

  /// Checks, without loading, that the bytes are a shared object this
  /// runtime can load and that everything the dynamic loader reads or
  /// writes while loading lies inside them: the ELF header (64-bit, little
  /// endian, the host's machine, ET_DYN); the program headers (in the file,
  /// loadable segments ordered, aligned and of bounded size, the dynamic
  /// segment and RELRO inside loaded memory, no TLS, interpreter or
  /// executable stack); the dynamic section (only the tags a kernel library
  /// has: no initializers, finalizers, RPATH or text relocations; needed
  /// libraries only libc/libm; tables inside loaded memory); the GNU hash
  /// table and symbols (chains in range, names in the string table, no IFUNC
  /// or TLS symbols); version needs and version indices; every relocation
  /// (a known type, its symbol in range, its target inside a writable
  /// segment). So loading runs no code of the library. Not validated: the
  /// machine code and the values relocations write (a bit flip there loads
  /// and misbehaves when called): the .rvx section checksum covers those.
  static void validate(std::span<const uint8_t> SharedObject,
                       const std::string &What);

  /// The ELF e_machine of the host (EM_X86_64, EM_AARCH64, ...).
  static uint16_t hostElfMachine();

  /// The address of the exported symbol Name; rivet::Error naming it when
  /// the library does not define it.
  void *symbol(const std::string &Name) const;

  const std::string &what() const { return What; }

  ~NativeLibrary();
  NativeLibrary(const NativeLibrary &) = delete;
  NativeLibrary &operator=(const NativeLibrary &) = delete;

private:
  explicit NativeLibrary(std::string What) : What(std::move(What)) {}
  void *Handle = nullptr;
  /// The memory file (or temporary file) dlopen read; kept until dlclose so
  /// its /proc/self/fd path (or file name) is not reused meanwhile: the
  /// loader matches already-loaded objects by that name.
  int Fd = -1;
  std::string TempPath;
  std::string What;
};

} // namespace rivet::vm
