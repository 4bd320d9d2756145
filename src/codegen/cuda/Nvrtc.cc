//===- Nvrtc.cc - CUDA C++ to GPU code, at compile time -------------------===//
#include "codegen/cuda/Nvrtc.h"

#include "kernels/Error.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <mutex>

namespace rivet::codegen::cuda {
namespace {

/// The NVRTC entry points Rivet uses, resolved from libnvrtc.
struct NvrtcApi {
  decltype(&nvrtcGetErrorString) getErrorString = nullptr;
  decltype(&nvrtcCreateProgram) createProgram = nullptr;
  decltype(&nvrtcDestroyProgram) destroyProgram = nullptr;
  decltype(&nvrtcCompileProgram) compileProgram = nullptr;
  decltype(&nvrtcGetProgramLogSize) getProgramLogSize = nullptr;
  decltype(&nvrtcGetProgramLog) getProgramLog = nullptr;
  decltype(&nvrtcGetCUBINSize) getCUBINSize = nullptr;
  decltype(&nvrtcGetCUBIN) getCUBIN = nullptr;
  decltype(&nvrtcGetPTXSize) getPTXSize = nullptr;
  decltype(&nvrtcGetPTX) getPTX = nullptr;
  std::string error; // why it could not be loaded
};

const NvrtcApi &api() {
  static NvrtcApi Api;
  static std::once_flag Once;
  std::call_once(Once, [] {
    void *H = nullptr;
    for (const char *Name : {"libnvrtc.so.13", "libnvrtc.so"})
      if ((H = dlopen(Name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!H) {
      const char *E = dlerror();
      Api.error = std::string("cannot load libnvrtc (the CUDA toolkit's "
                              "runtime compiler): ") +
                  (E ? E : "not found");
      return;
    }
    auto Get = [&](auto &Fn, const char *Sym) {
      Fn = reinterpret_cast<std::remove_reference_t<decltype(Fn)>>(
          dlsym(H, Sym));
      if (!Fn && Api.error.empty())
        Api.error = std::string("libnvrtc has no symbol ") + Sym;
    };
    Get(Api.getErrorString, "nvrtcGetErrorString");
    Get(Api.createProgram, "nvrtcCreateProgram");
    Get(Api.destroyProgram, "nvrtcDestroyProgram");
    Get(Api.compileProgram, "nvrtcCompileProgram");
    Get(Api.getProgramLogSize, "nvrtcGetProgramLogSize");
    Get(Api.getProgramLog, "nvrtcGetProgramLog");
    Get(Api.getCUBINSize, "nvrtcGetCUBINSize");
    Get(Api.getCUBIN, "nvrtcGetCUBIN");
    Get(Api.getPTXSize, "nvrtcGetPTXSize");
    Get(Api.getPTX, "nvrtcGetPTX");
  });
  return Api;
}

/// Compiles Source for one architecture; the cubin or the PTX.
CudaImage compileFor(const NvrtcApi &A, const std::string &Source,
                     const std::string &Name, const std::string &Arch,
                     bool Ptx) {
  nvrtcProgram Prog;
  auto Check = [&](nvrtcResult R, const char *What) {
    if (R != NVRTC_SUCCESS)
      fail("cuda codegen: {} of '{}' for {}: {}", What, Name, Arch,
           A.getErrorString(R));
  };
  Check(A.createProgram(&Prog, Source.c_str(), (Name + ".cu").c_str(), 0,
                        nullptr, nullptr),
        "creating the program");
  struct Destroy {
    const NvrtcApi &A;
    nvrtcProgram &P;
    ~Destroy() { A.destroyProgram(&P); }
  } D{A, Prog};
  std::string ArchOpt = "--gpu-architecture=" + Arch;
  const char *Opts[] = {ArchOpt.c_str(), "--std=c++17", "-default-device"};
  nvrtcResult R = A.compileProgram(Prog, 3, Opts);
  if (R != NVRTC_SUCCESS) {
    size_t N = 0;
    A.getProgramLogSize(Prog, &N);
    std::string Log(N, '\0');
    if (N)
      A.getProgramLog(Prog, Log.data());
    fail("cuda codegen: '{}' does not compile for {}: {}", Name, Arch, Log);
  }
  CudaImage Img{Arch, Ptx, {}};
  size_t N = 0;
  if (Ptx) {
    Check(A.getPTXSize(Prog, &N), "reading the PTX size");
    Img.bytes.resize(N);
    Check(A.getPTX(Prog, reinterpret_cast<char *>(Img.bytes.data())),
          "reading the PTX");
  } else {
    Check(A.getCUBINSize(Prog, &N), "reading the cubin size");
    Img.bytes.resize(N);
    Check(A.getCUBIN(Prog, reinterpret_cast<char *>(Img.bytes.data())),
          "reading the cubin");
  }
  return Img;
}

} // namespace

bool nvrtcAvailable(std::string *Why) {
  const NvrtcApi &A = api();
  if (Why)
    *Why = A.error;
  return A.error.empty();
}

std::vector<CudaImage> compileCuda(const std::string &Source,
                                   const std::string &Name,
                                   const std::vector<std::string> &CubinArchs,
                                   const std::string &PtxArch) {
  const NvrtcApi &A = api();
  if (!A.error.empty())
    fail("cuda codegen: {}", A.error);
  std::vector<CudaImage> Images;
  for (const std::string &Arch : CubinArchs)
    Images.push_back(compileFor(A, Source, Name, Arch, false));
  if (!PtxArch.empty())
    Images.push_back(compileFor(A, Source, Name, PtxArch, true));
  return Images;
}

} // namespace rivet::codegen::cuda
