//===- LayoutPreference.h - Which layouts a target wants -----*- C++ -*-===//
//
// AlterOpLayout asks the target, per anchor operator, which blocked layout
// it prefers. The CPU's (oneDNN's nChw8c/nChw16c) are installed by default;
// a target or a test installs others, or none (then the pass does nothing).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"

#include <memory>
#include <optional>

namespace rivet::ir {

/// A blocked convolution: data NCHW{inputBlock}c, weights
/// OIHW{inputBlock}i{outputBlock}o, result NCHW{outputBlock}c.
struct ConvLayout {
  int64_t inputBlock = 1;
  int64_t outputBlock = 1;
  bool operator==(const ConvLayout &O) const = default;
};

/// A target's layout preferences. Queried on type-checked calls only.
class LayoutPreferences {
public:
  virtual ~LayoutPreferences();
  /// The layout the target wants for this 2-d conv (x: [N, C, H, W] and
  /// w: [M, C/group, KH, KW] with constant C and M), or nullopt to keep
  /// NCHW. DataBlock is the block x is produced in (0: NCHW), so that a
  /// target may take it and save a conversion. Where a block does not
  /// divide C or M the pass pads the channels with zero ones up to a
  /// multiple of it (group-1 and depthwise convs; other grouped convs with
  /// such a choice stay NCHW).
  virtual std::optional<ConvLayout>
  preferredConvLayout(const CallNode &Conv, const TensorTypeNode &Data,
                      const TensorTypeNode &Weight,
                      int64_t DataBlock) const = 0;
};

/// Channels C in blocks of Block: C rounded up to a multiple of Block (what
/// AlterOpLayout pads them to).
inline int64_t paddedChannels(int64_t C, int64_t Block) {
  return (C + Block - 1) / Block * Block;
}

/// Prefers NCHW{block}c for every group-1 conv whose input and output
/// channels the block divides (a oneDNN-like target with one vector width).
class UniformBlockPreferences : public LayoutPreferences {
public:
  explicit UniformBlockPreferences(int64_t Block);
  std::optional<ConvLayout>
  preferredConvLayout(const CallNode &Conv, const TensorTypeNode &Data,
                      const TensorTypeNode &Weight,
                      int64_t DataBlock) const override;

private:
  int64_t Block;
};

/// The CPU with oneDNN: NCHW{b}c, b being oneDNN's channel block for the
/// host's vectors (16 with AVX-512, 8 with AVX2), for group-1 and depthwise
/// convs whose channels b divides; else, with AVX-512, 16 with the channels
/// padded where that adds at most half of them (24 as 32); else 8 where 8
/// divides (oneDNN runs its AVX2 kernels on an AVX-512 host), so that
/// activations stay blocked from one oneDNN conv to the next. A depthwise conv
/// keeps the block its input comes in (memory-bound, it gains less from the
/// wider block than a conversion costs). A conv with fewer input channels than
/// b (an image's) reads plain NCHW (block 1) and writes blocked. None while
/// oneDNN is off or on other CPUs.
class DnnlCpuPreferences : public LayoutPreferences {
public:
  /// Block 0: the host's block as above.
  explicit DnnlCpuPreferences(int64_t Block = 0);
  std::optional<ConvLayout>
  preferredConvLayout(const CallNode &Conv, const TensorTypeNode &Data,
                      const TensorTypeNode &Weight,
                      int64_t DataBlock) const override;

private:
  int64_t Block;
};

/// Installs P as the preferences AlterOpLayout uses (null: none); returns
/// the previous ones. Process-wide: a compilation's target sets it. Until
/// something is installed, DnnlCpuPreferences are.
std::shared_ptr<const LayoutPreferences>
setLayoutPreferences(std::shared_ptr<const LayoutPreferences> P);
/// The installed preferences, or null.
std::shared_ptr<const LayoutPreferences> currentLayoutPreferences();

/// Installs preferences for a scope and restores the previous ones after.
class ScopedLayoutPreferences {
public:
  explicit ScopedLayoutPreferences(std::shared_ptr<const LayoutPreferences> P)
      : Saved(setLayoutPreferences(std::move(P))) {}
  ~ScopedLayoutPreferences() { setLayoutPreferences(std::move(Saved)); }
  ScopedLayoutPreferences(const ScopedLayoutPreferences &) = delete;
  ScopedLayoutPreferences &operator=(const ScopedLayoutPreferences &) = delete;

private:
  std::shared_ptr<const LayoutPreferences> Saved;
};

} // namespace rivet::ir
