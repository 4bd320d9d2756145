//===- ConvChainAttrs.cc - Two fused convs' attributes --------------------===//
#include "kernels/ConvChainAttrs.h"

#include <string>
#include <string_view>

namespace rivet {

namespace {

constexpr std::string_view kSecondPrefix = "dw_";
constexpr const char *kFirstInputs = "pw_inputs";

} // namespace

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
