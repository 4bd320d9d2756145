//===- ConvChain.cc - Two fused convs as one kernel call ------------------===//
#include "kernels/cpu/ConvChain.h"

#include "kernels/cpu/CpuSupport.h"

#include <atomic>

#include <unistd.h>

namespace rivet {

namespace {

std::atomic<PointwiseDepthwiseChoice> &pairChoiceFlag() {
  static std::atomic<PointwiseDepthwiseChoice> C{
      cpu::choiceFromEnvironment<PointwiseDepthwiseChoice>(
          "RIVET_POINTWISE_DEPTHWISE")};
  return C;
}

/// Bytes of one core's L2 (1 MiB where the system does not say).
int64_t l2Bytes() {
  static const int64_t Bytes = [] {
    long B = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return B > 0 ? (int64_t)B : int64_t(1) << 20;
  }();
  return Bytes;
}

} // namespace

PointwiseDepthwiseChoice pointwiseDepthwiseChoice() {
  return pairChoiceFlag().load();
}
void setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice C) {
  pairChoiceFlag().store(C);
}
bool pointwiseDepthwiseTakes(int64_t Bytes) {
  PointwiseDepthwiseChoice C = pointwiseDepthwiseChoice();
  return C == PointwiseDepthwiseChoice::Always ||
         (C == PointwiseDepthwiseChoice::Auto && Bytes >= l2Bytes());
}

} // namespace rivet
