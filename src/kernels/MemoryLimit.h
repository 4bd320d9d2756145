//===- MemoryLimit.h - How much memory this process may use ----*- C++ -*-===//
//
// The most memory this process can hope to allocate: the machine's physical
// memory, or less under an address-space or data-segment limit (ulimit -v,
// ulimit -d). Checks that refuse work which cannot fit (require_memory)
// compare against it, so that they fail at once instead of after filling
// the memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace rivet {

/// In bytes; read once per process.
uint64_t memoryLimitBytes();

} // namespace rivet
