//===- LayoutPreference.cc - Which layouts a target wants -----------------===//
#include "ir/transforms/LayoutPreference.h"

#include "kernels/AttrSchema.h"
#include "kernels/DnnlConfig.h"
#include "kernels/Error.h"

#include <mutex>

namespace rivet::ir {

LayoutPreferences::~LayoutPreferences() = default;

UniformBlockPreferences::UniformBlockPreferences(int64_t Block) : Block(Block) {
  RIVET_CHECK(Block >= 1, "layout block must be >= 1, got {}", Block);
}

std::optional<ConvLayout> UniformBlockPreferences::preferredConvLayout(
    const CallNode &Conv, const TensorTypeNode &Data,
    const TensorTypeNode &Weight, int64_t) const {
  if (OpAttrs("conv", Conv.attrs).getInt("group") != 1 || !Data.shape ||
      !Weight.shape)
    return std::nullopt;
  const Dim &C = (*Data.shape)[1], &M = (*Weight.shape)[0];
  if (!C.isConst() || !M.isConst() || C.value % Block != 0 ||
      M.value % Block != 0)
    return std::nullopt;
  return ConvLayout{Block, Block};
}

/// oneDNN's channel block on this CPU, or 0 when it has no vectors the
/// blocked kernels are written for.
static int64_t hostChannelBlock() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f"))
    return 16;
  if (__builtin_cpu_supports("avx2"))
    return 8;
#endif
  return 0;
}

DnnlCpuPreferences::DnnlCpuPreferences(int64_t Block)
    : Block(Block ? Block : hostChannelBlock()) {
  RIVET_CHECK(this->Block >= 0, "layout block must be >= 0, got {}", Block);
}

std::optional<ConvLayout> DnnlCpuPreferences::preferredConvLayout(
    const CallNode &Conv, const TensorTypeNode &Data,
    const TensorTypeNode &Weight, int64_t DataBlock) const {
  if (Block < 2 || !dnnlEnabled() || !Data.shape || !Weight.shape ||
      Data.dtype != DType::Float32 || Data.shape->size() != 4)
    return std::nullopt;
  const Dim &C = (*Data.shape)[1], &M = (*Weight.shape)[0];
  if (!C.isConst() || !M.isConst())
    return std::nullopt;
  int64_t G = OpAttrs("conv", Conv.attrs).getInt("group");
  bool Depthwise = G == C.value && G == M.value;
  // A depthwise conv is memory-bound: converting its input costs more than
  // the wider block gains (mobilenet_v2's 24-channel stage, 8c on AVX-512,
  // runs its 144 depthwise channels on 8c: 3-4% of the model, both T).
  if (Depthwise && (DataBlock == 8 || DataBlock == Block) &&
      C.value % DataBlock == 0)
    return ConvLayout{DataBlock, DataBlock};
  // The host's block, else AVX2's 8 (oneDNN runs its AVX2 kernels on an
  // AVX-512 host): mobilenet_v2's 24-channel stage stays blocked. Before
  // the 8, AVX-512's 16 with channels padded (AlterOpLayout adds zero ones)
  // where that adds at most half of them: mobilenet_v2's 24 channels run as
  // 32 on AVX-512 kernels, faster than as 24 on AVX2's on a Sapphire Rapids
  // core (144 -> 24 at 56x56: 0.41 vs 0.50 ms and more, 24 -> 144: 0.22 vs
  // 0.37), and the 16c <-> 8c conversions around them go. Not measured on
  // AVX2 hosts, whose 8 is left as it was.
  auto Fits = [&](int64_t X) { return 2 * paddedChannels(X, Block) <= 3 * X; };
  for (int64_t B : {Block, int64_t(8)}) {
    if (B > Block)
      continue;
    if (M.value % B == 0) {
      if (G == 1 && C.value % B == 0)
        return ConvLayout{B, B};
      if (G == 1 && C.value < B) // an image: oneDNN's plain-input kernels
        return ConvLayout{1, B};
      if (Depthwise && C.value % B == 0)
        return ConvLayout{B, B};
    }
    // A depthwise conv pads when its input comes padded.
    if (B == Block && Block >= 16 && C.value >= Block && Fits(C.value) &&
        Fits(M.value) && (G == 1 || (Depthwise && DataBlock == Block)))
      return ConvLayout{B, B};
  }
  return std::nullopt;
}

namespace {
struct Installed {
  std::mutex M;
  std::shared_ptr<const LayoutPreferences> P =
      std::make_shared<DnnlCpuPreferences>();
};
Installed &installed() {
  static Installed I;
  return I;
}
} // namespace

std::shared_ptr<const LayoutPreferences>
setLayoutPreferences(std::shared_ptr<const LayoutPreferences> P) {
  Installed &I = installed();
  std::lock_guard<std::mutex> L(I.M);
  std::swap(I.P, P);
  return P;
}

std::shared_ptr<const LayoutPreferences> currentLayoutPreferences() {
  Installed &I = installed();
  std::lock_guard<std::mutex> L(I.M);
  return I.P;
}

} // namespace rivet::ir
