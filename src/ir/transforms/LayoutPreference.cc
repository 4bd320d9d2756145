//===- LayoutPreference.cc - Which layouts a target wants -----------------===//
#include "ir/transforms/LayoutPreference.h"

#include "kernels/Error.h"

#include <mutex>

namespace rivet::ir {

LayoutPreferences::~LayoutPreferences() = default;

UniformBlockPreferences::UniformBlockPreferences(int64_t Block) : Block(Block) {
  RIVET_CHECK(Block >= 1, "layout block must be >= 1, got {}", Block);
}

std::optional<ConvLayout> UniformBlockPreferences::preferredConvLayout(
    const CallNode &Conv, const TensorTypeNode &Data,
    const TensorTypeNode &Weight) const {
  if (Conv.attrs.getInt("group", 1) != 1 || !Data.shape || !Weight.shape)
    return std::nullopt;
  const Dim &C = (*Data.shape)[1], &M = (*Weight.shape)[0];
  if (!C.isConst() || !M.isConst() || C.value % Block != 0 ||
      M.value % Block != 0)
    return std::nullopt;
  return ConvLayout{Block, Block};
}

namespace {
struct Installed {
  std::mutex M;
  std::shared_ptr<const LayoutPreferences> P;
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
