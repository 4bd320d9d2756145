//===- Gpu.cc - The CUDA GPU as the runtime sees it -----------------------===//
//
// Gpu is one object for the whole process, made on first use and never
// destroyed: device storages and modules may die during static destruction
// and must still find their allocator and driver. Work is ordered by its one
// non-blocking stream (it does not wait for the legacy default stream, which
// other libraries in the process may use).
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/Gpu.h"

#include "kernels/Error.h"
#include "vm/cuda/CudaDriver.h"
#include "vm/cuda/DeviceAllocator.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string_view>

namespace rivet::vm::cuda {

bool available(std::string *Why) { return driver(Why) != nullptr; }

namespace {

/// Whether this thread has made the (one) context current. The driver keeps
/// the current context per thread, and VM threads differ; remembering it
/// saves a driver call on every copy and launch.
thread_local bool ContextBound = false;

void bindContext(const Driver &Drv, CUcontext Ctx) {
  if (ContextBound) [[likely]]
    return;
  check(Drv.cuCtxSetCurrent(Ctx), "cuCtxSetCurrent");
  ContextBound = true;
}

CUdeviceptr devicePtr(const void *P) { return reinterpret_cast<uintptr_t>(P); }

/// XY of "compute_XY"; -1 for anything else (including arch-specific PTX
/// such as compute_90a, which runs on no other architecture).
int ptxVersion(const std::string &Arch) {
  constexpr std::string_view Prefix = "compute_";
  if (!Arch.starts_with(Prefix))
    return -1;
  const char *End = Arch.data() + Arch.size();
  int V = -1;
  auto [P, Ec] = std::from_chars(Arch.data() + Prefix.size(), End, V);
  return Ec == std::errc() && P == End ? V : -1;
}

/// Work noted while a thread records (Gpu::beginRecording): a kernel launch
/// with its arguments by value, or library work.
struct RecordedWork {
  KernelHandle fn = nullptr;
  uint32_t grid = 0, block = 0;
  std::vector<uint64_t> args;
  std::function<void()> work; // when fn is null
};

/// What this thread has noted since the last flush, and its signature.
struct Recording {
  int depth = 0; // nested beginRecording calls
  bool active = false;
  std::vector<RecordedWork> items;
  std::vector<uint64_t> signature;
};
thread_local Recording ThisThread;

/// A signature's graph: how often it was flushed, and its graph once
/// captured (or that capturing it failed: it is launched directly).
struct GraphEntry {
  size_t seen = 0;
  CUgraphExec exec = nullptr;
  bool failed = false;
};
/// Signatures kept at most (each holds a few kernels' arguments).
constexpr size_t kMaxGraphs = 512;

bool graphsFromEnvironment() {
  const char *E = std::getenv("RIVET_CUDA_GRAPHS");
  return !(E && std::string_view(E) == "0");
}

class CudaModule final : public Module {
public:
  CudaModule(const Driver &Drv, CUcontext Ctx, CUmodule M)
      : Drv(Drv), Ctx(Ctx), M(M) {}
  ~CudaModule() override {
    // Errors ignored: at exit the driver may have shut down already.
    if (Drv.cuCtxSetCurrent(Ctx) == CUDA_SUCCESS)
      Drv.cuModuleUnload(M);
  }

  KernelHandle function(const std::string &Name) const override {
    bindContext(Drv, Ctx);
    CUfunction F = nullptr;
    if (CUresult R = Drv.cuModuleGetFunction(&F, M, Name.c_str());
        R != CUDA_SUCCESS)
      fail("CUDA error in cuModuleGetFunction({}): {}", Name, errorString(R));
    return F;
  }

private:
  const Driver &Drv;
  CUcontext Ctx;
  CUmodule M;
};

class CudaGpu final : public Gpu {
public:
  explicit CudaGpu(const Driver &Drv) : Drv(Drv), Alloc(Drv) {
    check(Drv.cuDeviceGet(&Dev, 0), "cuDeviceGet");
    // The primary context is the one cudart (cuBLAS, cuDNN) uses too, so
    // pointers and streams are shared with them.
    check(Drv.cuDevicePrimaryCtxRetain(&Ctx, Dev), "cuDevicePrimaryCtxRetain");
    bindContext(Drv, Ctx);
    char Buf[256] = {};
    check(Drv.cuDeviceGetName(Buf, sizeof(Buf) - 1, Dev), "cuDeviceGetName");
    Name = Buf;
    int Major = 0, Minor = 0;
    check(Drv.cuDeviceGetAttribute(
              &Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Dev),
          "cuDeviceGetAttribute");
    check(Drv.cuDeviceGetAttribute(
              &Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Dev),
          "cuDeviceGetAttribute");
    CC = Major * 10 + Minor;
    check(Drv.cuDeviceGetAttribute(
              &SMs, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Dev),
          "cuDeviceGetAttribute");
    check(Drv.cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate");
  }

  void makeCurrent() const { bindContext(Drv, Ctx); }

  std::string name() const override { return Name; }
  int computeCapability() const override { return CC; }
  int multiprocessors() const override { return SMs; }

  std::shared_ptr<Storage> allocate(size_t NBytes) override {
    makeCurrent();
    return Alloc.allocate(NBytes);
  }

  void copyHostToDevice(void *Dst, const void *Src, size_t N) override {
    if (N == 0)
      return;
    auto Hold = lockStream();
    flush();
    makeCurrent();
    check(Drv.cuMemcpyHtoDAsync(devicePtr(Dst), Src, N, Stream),
          "cuMemcpyHtoDAsync");
  }

  void copyDeviceToHost(void *Dst, const void *Src, size_t N) override {
    if (N == 0)
      return;
    auto Hold = lockStream();
    flush();
    makeCurrent();
    check(Drv.cuMemcpyDtoHAsync(Dst, devicePtr(Src), N, Stream),
          "cuMemcpyDtoHAsync");
    // The caller reads Dst next.
    check(Drv.cuStreamSynchronize(Stream), "cuStreamSynchronize");
  }

  void copyDeviceToDevice(void *Dst, const void *Src, size_t N) override {
    if (N == 0)
      return;
    auto Hold = lockStream();
    flush();
    makeCurrent();
    check(Drv.cuMemcpyDtoDAsync(devicePtr(Dst), devicePtr(Src), N, Stream),
          "cuMemcpyDtoDAsync");
  }

  void synchronize() override {
    auto Hold = lockStream();
    flush();
    makeCurrent();
    check(Drv.cuStreamSynchronize(Stream), "cuStreamSynchronize");
  }

  void *stream() const override { return Stream; }

  void enqueue(std::vector<uint64_t> Signature,
               std::function<void()> Work) override {
    Recording &R = ThisThread;
    if (R.active) {
      R.signature.push_back(2); // library work
      R.signature.push_back(Signature.size());
      R.signature.insert(R.signature.end(), Signature.begin(), Signature.end());
      R.items.push_back({nullptr, 0, 0, {}, std::move(Work)});
      return;
    }
    auto Hold = lockStream();
    flush();
    makeCurrent();
    Work();
  }

  void launchRecorded(KernelHandle F, uint32_t Grid, uint32_t Block,
                      const uint64_t *Args, size_t NumArgs) override {
    Recording &R = ThisThread;
    if (R.active) {
      R.signature.insert(R.signature.end(), {1, reinterpret_cast<uintptr_t>(F),
                                             Grid, Block, NumArgs});
      R.signature.insert(R.signature.end(), Args, Args + NumArgs);
      R.items.push_back(
          {F, Grid, Block, std::vector<uint64_t>(Args, Args + NumArgs), {}});
      return;
    }
    auto Hold = lockStream();
    flush();
    makeCurrent();
    launchValues(F, Grid, Block, Args, NumArgs);
  }

  void beginRecording() override {
    Recording &R = ThisThread;
    if (R.depth++ == 0)
      R.active = Graphs;
  }

  void endRecording() override {
    Recording &R = ThisThread;
    if (R.depth == 0 || --R.depth > 0)
      return;
    auto Hold = lockStream();
    flush();
    R.active = false;
  }

  void setGraphsEnabled(bool On) override { Graphs = On; }
  bool graphsEnabled() const override { return Graphs; }
  size_t graphLaunches() const override { return GraphLaunches; }
  size_t graphCaptures() const override { return GraphCaptures; }

  std::unique_lock<std::recursive_mutex> lockStream() override {
    return std::unique_lock<std::recursive_mutex>(StreamLock);
  }

  std::shared_ptr<Module>
  loadModule(const std::vector<ImageRef> &Images) override {
    makeCurrent();
    const ImageRef *Image = pickImage(Images);
    if (!Image->data || Image->size == 0)
      fail("cannot load GPU code: the {} image is empty", Image->arch);
    const void *Data = Image->data;
    // The driver reads PTX as a C string.
    std::string Ptx;
    if (Image->ptx && Image->data[Image->size - 1] != '\0') {
      Ptx.assign(reinterpret_cast<const char *>(Image->data), Image->size);
      Data = Ptx.c_str();
    }
    // The JIT's error log says what is wrong with PTX it rejects.
    char Log[4096] = {};
    CUjit_option Options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *Values[] = {Log, reinterpret_cast<void *>(uintptr_t{sizeof(Log)})};
    CUmodule M = nullptr;
    if (CUresult R = Drv.cuModuleLoadDataEx(&M, Data, 2, Options, Values);
        R != CUDA_SUCCESS)
      fail("CUDA error in cuModuleLoadDataEx ({} image): {}{}{}", Image->arch,
           errorString(R), Log[0] ? "\n" : "", Log);
    try {
      return std::make_shared<CudaModule>(Drv, Ctx, M);
    } catch (...) {
      Drv.cuModuleUnload(M);
      throw;
    }
  }

  void launch(KernelHandle F, uint32_t Grid, uint32_t Block,
              void **Args) override {
    auto Hold = lockStream();
    flush();
    makeCurrent();
    check(Drv.cuLaunchKernel(static_cast<CUfunction>(F), Grid, 1, 1, Block, 1,
                             1, 0, Stream, Args, nullptr),
          "cuLaunchKernel");
  }

  void beginCapture() override {
    makeCurrent();
    // Thread-local mode: only this thread's unsafe calls (a synchronizing
    // cuMemFree, say) invalidate the capture; other VM threads run on.
    check(Drv.cuStreamBeginCapture(Stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
  }

  GraphHandle endCapture() override {
    makeCurrent();
    CUgraph G = nullptr;
    check(Drv.cuStreamEndCapture(Stream, &G), "cuStreamEndCapture");
    CUgraphExec Exec = nullptr;
    CUresult R = Drv.cuGraphInstantiate(&Exec, G, 0);
    // The executable graph is independent of the graph it was made from.
    CUresult Destroyed = Drv.cuGraphDestroy(G);
    check(R, "cuGraphInstantiate");
    check(Destroyed, "cuGraphDestroy");
    return Exec;
  }

  void launchGraph(GraphHandle G) override {
    makeCurrent();
    check(Drv.cuGraphLaunch(static_cast<CUgraphExec>(G), Stream),
          "cuGraphLaunch");
  }

  void destroyGraph(GraphHandle G) override {
    // Errors ignored, as for modules: graphs are destroyed by destructors,
    // possibly at exit, after the driver has shut down.
    if (G)
      Drv.cuGraphExecDestroy(static_cast<CUgraphExec>(G));
  }

  size_t driverAllocations() const override {
    return Alloc.driverAllocations();
  }
  size_t heldBytes() const override { return Alloc.heldBytes(); }

private:
  /// Launches F with 8-byte arguments given by value.
  void launchValues(KernelHandle F, uint32_t Grid, uint32_t Block,
                    const uint64_t *Args, size_t NumArgs) {
    void *Params[64];
    std::vector<void *> Many;
    void **P = Params;
    if (NumArgs > 64) {
      Many.resize(NumArgs);
      P = Many.data();
    }
    for (size_t I = 0; I < NumArgs; ++I)
      P[I] = const_cast<uint64_t *>(Args + I);
    check(Drv.cuLaunchKernel(static_cast<CUfunction>(F), Grid, 1, 1, Block, 1,
                             1, 0, Stream, P, nullptr),
          "cuLaunchKernel");
  }

  void run(const std::vector<RecordedWork> &Items) {
    for (const RecordedWork &W : Items) {
      if (W.fn)
        launchValues(W.fn, W.grid, W.block, W.args.data(), W.args.size());
      else
        W.work();
    }
  }

  /// Launches what this thread has recorded (StreamLock held): directly,
  /// or as a graph (see Gpu::beginRecording).
  void flush() {
    Recording &R = ThisThread;
    if (R.items.empty())
      return;
    std::vector<RecordedWork> Items = std::move(R.items);
    std::vector<uint64_t> Signature = std::move(R.signature);
    R.items.clear();
    R.signature.clear();
    // Running the work must not record it again.
    struct Pause {
      Recording &R;
      bool Was;
      ~Pause() { R.active = Was; }
    } P{R, R.active};
    R.active = false;
    makeCurrent();
    if (Items.size() < 2) {
      run(Items);
      return;
    }
    auto It = GraphCache.find(Signature);
    if (It == GraphCache.end()) {
      if (GraphCache.size() >= kMaxGraphs) {
        run(Items);
        return;
      }
      It = GraphCache.emplace(std::move(Signature), GraphEntry{}).first;
    }
    GraphEntry &E = It->second;
    ++E.seen;
    if (E.exec) {
      check(Drv.cuGraphLaunch(E.exec, Stream), "cuGraphLaunch");
      ++GraphLaunches;
      return;
    }
    if (E.failed || E.seen < 2) {
      run(Items);
      return;
    }
    // The second sighting: capture. Work that cannot be captured (the
    // driver invalidates the capture) marks the signature as direct-only;
    // the captured work has not run, so it runs directly then.
    bool Ran = false;
    if (Drv.cuStreamBeginCapture(Stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) ==
        CUDA_SUCCESS) {
      bool Captured = true;
      try {
        run(Items);
      } catch (const Error &) {
        Captured = false;
      }
      CUgraph G = nullptr;
      CUresult Ended = Drv.cuStreamEndCapture(Stream, &G);
      CUgraphExec Exec = nullptr;
      if (Captured && Ended == CUDA_SUCCESS && G &&
          Drv.cuGraphInstantiate(&Exec, G, 0) == CUDA_SUCCESS) {
        E.exec = Exec;
        ++GraphCaptures;
      }
      if (G)
        Drv.cuGraphDestroy(G);
      if (E.exec) {
        check(Drv.cuGraphLaunch(E.exec, Stream), "cuGraphLaunch");
        ++GraphLaunches;
        Ran = true;
      }
    }
    if (!Ran) {
      E.failed = true;
      run(Items);
    }
  }

  /// The cubin of this GPU's architecture, else the newest PTX not newer
  /// than it (the driver compiles PTX for newer GPUs, never for older ones).
  const ImageRef *pickImage(const std::vector<ImageRef> &Images) const {
    std::string Arch = fmt::format("sm_{}", CC);
    const ImageRef *Best = nullptr;
    int BestPtx = -1;
    for (const ImageRef &I : Images) {
      if (!I.ptx && I.arch == Arch)
        return &I;
      int V = I.ptx ? ptxVersion(I.arch) : -1;
      if (V > BestPtx && V <= CC) {
        Best = &I;
        BestPtx = V;
      }
    }
    if (Best)
      return Best;
    std::string Present;
    for (const ImageRef &I : Images)
      Present += (Present.empty() ? "" : ", ") + I.arch;
    fail("no GPU code for this GPU ({}, {}): the executable has {}", Name, Arch,
         Present.empty() ? "none" : Present);
  }

  const Driver &Drv;
  CUdevice Dev = 0;
  CUcontext Ctx = nullptr;
  CUstream Stream = nullptr;
  std::string Name;
  int CC = 0, SMs = 0;
  DeviceAllocator Alloc;
  /// Serializes the stream's users, so that no thread queues work while
  /// another captures a graph from it.
  std::recursive_mutex StreamLock;
  std::map<std::vector<uint64_t>, GraphEntry> GraphCache; // by signature
  bool Graphs = graphsFromEnvironment();
  size_t GraphLaunches = 0, GraphCaptures = 0;
};

} // namespace

Gpu &Gpu::get() {
  std::string Why;
  const Driver *Drv = driver(&Why);
  if (!Drv)
    fail("this executable needs a CUDA GPU: {}", Why);
  // Leaked on purpose (see the file comment). A constructor that throws
  // leaves it unset, to be tried again by the next call.
  static CudaGpu *Instance = new CudaGpu(*Drv);
  Instance->makeCurrent();
  return *Instance;
}

} // namespace rivet::vm::cuda
