//===- Op.cc - The operator registry --------------------------------------===//
#include "ir/Op.h"

#include "kernels/Error.h"

#include <map>
#include <memory>

namespace rivet::ir {

namespace {
// Stable addresses: OpNode keeps a pointer to its OpInfo.
std::map<std::string, std::unique_ptr<OpInfo>, std::less<>> &table() {
  static std::map<std::string, std::unique_ptr<OpInfo>, std::less<>> T;
  return T;
}
} // namespace

OpRegistry &OpRegistry::global() {
  static OpRegistry R;
  return R;
}

void OpRegistry::add(OpInfo Info) {
  auto &T = table();
  RIVET_CHECK(!T.count(Info.name), "operator '{}' registered twice", Info.name);
  std::string Name = Info.name;
  T.emplace(std::move(Name), std::make_unique<OpInfo>(std::move(Info)));
}

const OpInfo *OpRegistry::find(std::string_view Name) const {
  auto &T = table();
  auto It = T.find(Name);
  return It == T.end() ? nullptr : It->second.get();
}

const OpInfo &OpRegistry::get(std::string_view Name) const {
  if (const OpInfo *I = find(Name))
    return *I;
  fail("unknown operator '{}'", Name);
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> R;
  for (auto &[N, _] : table())
    R.push_back(N);
  return R;
}

} // namespace rivet::ir
