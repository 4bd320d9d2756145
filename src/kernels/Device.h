//===- Device.h - Where a tensor's memory lives -----------------*- C++ -*-===//
//
// The devices of the runtime. A Storage records its device; a tensor on a
// device other than the CPU has a data pointer that only that device's code
// may dereference (the VM places every kernel call on one device and copies
// values between devices with DeviceCopy).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace rivet {

/// A device index as bytecode and .rvx files store it (DeviceCopy,
/// AllocStorage, LoadConst). Append only.
enum class Device : uint8_t {
  CPU = 0,
  CUDA = 1, // the process's CUDA GPU 0
};
inline constexpr uint32_t kNumDevices = 2;

inline const char *deviceName(Device D) {
  return D == Device::CUDA ? "cuda" : "cpu";
}

} // namespace rivet
