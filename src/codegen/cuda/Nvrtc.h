//===- Nvrtc.h - CUDA C++ to GPU code, at compile time ----------*- C++ -*-===//
//
// The CUDA backend's second half: NVRTC turns kernel source into cubins for
// the real architectures Rivet ships (sm_80, sm_90) and PTX for newer GPUs,
// on the compiling machine, which needs no GPU. libnvrtc is loaded with
// dlopen on first use, so the compiler library loads (and compiles for the
// CPU) on a machine without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::codegen::cuda {

/// One image of compiled GPU code.
struct CudaImage {
  std::string arch; // "sm_80" (a cubin) or "compute_90" (PTX)
  bool ptx = false;
  std::vector<uint8_t> bytes;
};

/// Whether NVRTC can be loaded here; Why says why not.
bool nvrtcAvailable(std::string *Why = nullptr);

/// Compiles Source to one cubin per entry of CubinArchs (sm_XX) and, when
/// PtxArch is not empty, PTX for it (compute_XX). Throws rivet::Error with
/// NVRTC's log when the source does not compile, and when NVRTC cannot be
/// loaded.
std::vector<CudaImage> compileCuda(const std::string &Source,
                                   const std::string &Name,
                                   const std::vector<std::string> &CubinArchs,
                                   const std::string &PtxArch);

/// The architectures a CUDA executable carries: sm_80 and sm_90 cubins,
/// and compute_90 PTX for newer GPUs.
inline const std::vector<std::string> kCubinArchs = {"sm_80", "sm_90"};
inline constexpr const char *kPtxArch = "compute_90";

} // namespace rivet::codegen::cuda
