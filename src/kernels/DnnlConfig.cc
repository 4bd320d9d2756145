//===- DnnlConfig.cc - Turning the oneDNN anchors on and off --------------===//
#include "kernels/DnnlConfig.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace rivet {
namespace {

std::atomic<bool> &enabledFlag() {
  static std::atomic<bool> On{[] {
    const char *E = std::getenv("RIVET_DISABLE_DNNL");
    return !E || !*E || std::strcmp(E, "0") == 0;
  }()};
  return On;
}

} // namespace

bool dnnlEnabled() { return enabledFlag().load(std::memory_order_relaxed); }

void setDnnlEnabled(bool On) { enabledFlag().store(On); }

} // namespace rivet
