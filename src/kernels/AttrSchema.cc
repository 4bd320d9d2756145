//===- AttrSchema.cc - The attributes an operator accepts -----------------===//
#include "kernels/AttrSchema.h"

#include "kernels/Error.h"

#include <array>
#include <map>

namespace rivet {

AttrSchema::AttrSchema(std::vector<AttrSpec> S) : Specs(std::move(S)) {
  for (const AttrSpec &Spec : Specs)
    if (Spec.defaultValue)
      Defaults.set(Spec.name, *Spec.defaultValue);
}

const AttrSpec *AttrSchema::find(std::string_view Name) const {
  for (const AttrSpec &Spec : Specs)
    if (Spec.name == Name)
      return &Spec;
  return nullptr;
}

namespace {
// Filled by static registrars before main and only read afterwards, so it
// needs no lock. std::map keeps schema addresses stable.
std::map<std::string, AttrSchema, std::less<>> &schemas() {
  static std::map<std::string, AttrSchema, std::less<>> S;
  return S;
}
} // namespace

void registerAttrSchema(std::string Op, AttrSchema Schema) {
  for (const AttrSpec &Spec : Schema) {
    if (!Spec.defaultValue)
      continue;
    if (Spec.required)
      fail("attribute schema of '{}': required attribute '{}' has a default",
           Op, Spec.name);
    // Kind lists the alternatives of AttrValue in order.
    if (Spec.defaultValue->index() != (size_t)Spec.kind)
      fail("attribute schema of '{}': the default of '{}' has another kind", Op,
           Spec.name);
  }
  std::string Name = Op;
  if (!schemas().emplace(std::move(Op), std::move(Schema)).second)
    fail("attribute schema of '{}' is registered twice", Name);
}

const AttrSchema &attrSchema(std::string_view Op) {
  static const AttrSchema Empty;
  // This thread's last lookups, found by the name's address and confirmed
  // by one comparison with the registered name (an address may come back
  // with other text). Kernels look their schema up for every attribute
  // they read, and the map's search (about eight string comparisons) was
  // 5% of a short transformer's run.
  struct Hit {
    const char *at = nullptr;
    std::string_view name;
    const AttrSchema *schema = nullptr;
  };
  thread_local std::array<Hit, 8> Hits;
  thread_local size_t Next = 0;
  for (const Hit &H : Hits)
    if (H.at == Op.data() && H.name == Op)
      return *H.schema;
  auto It = schemas().find(Op);
  if (It == schemas().end())
    return Empty;
  Hits[Next++ % Hits.size()] = {Op.data(), It->first, &It->second};
  return It->second;
}

} // namespace rivet
