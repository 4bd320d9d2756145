//===- ConvChain.cc - Two fused convs as one kernel call ------------------===//
#include "kernels/cpu/ConvChain.h"

#include "kernels/cpu/CpuSupport.h"

#include <atomic>
#include <string_view>

#include <unistd.h>

namespace rivet {

namespace {

constexpr std::string_view kSecondPrefix = "dw_";
constexpr const char *kFirstInputs = "pw_inputs";

std::atomic<PointwiseDepthwiseChoice> &choiceFlag() {
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
  return choiceFlag().load();
}
void setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice C) {
  choiceFlag().store(C);
}
bool pointwiseDepthwiseTakes(int64_t Bytes) {
  PointwiseDepthwiseChoice C = pointwiseDepthwiseChoice();
  return C == PointwiseDepthwiseChoice::Always ||
         (C == PointwiseDepthwiseChoice::Auto && Bytes >= l2Bytes());
}

Attrs pointwiseDepthwiseAttrs(const Attrs &First, int64_t FirstInputs,
                              const Attrs &Second) {
  Attrs A = First;
  for (const auto &[Name, V] : Second.items())
    A.set(std::string(kSecondPrefix) + Name, V);
  A.set(kFirstInputs, FirstInputs);
  return A;
}

bool splitPointwiseDepthwiseAttrs(const Attrs &A, Attrs &First,
                                  int64_t &FirstInputs, Attrs &Second) {
  if (!A.has(kFirstInputs))
    return false;
  FirstInputs = A.getInt(kFirstInputs, 0);
  for (const auto &[Name, V] : A.items()) {
    if (Name == kFirstInputs)
      continue;
    if (std::string_view(Name).substr(0, kSecondPrefix.size()) == kSecondPrefix)
      Second.set(Name.substr(kSecondPrefix.size()), V);
    else
      First.set(Name, V);
  }
  return true;
}

} // namespace rivet
