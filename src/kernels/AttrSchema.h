//===- AttrSchema.h - The attributes an operator accepts --------*- C++ -*-===//
//
// Each operator's attribute schema (name, kind, default, doc) is registered
// once, in this layer, next to the operator's kernel
// (RIVET_REGISTER_ATTRS). The IR's operator registry, the type relations,
// the kernels, the codegen rules and the passes all read it: a default is
// written in exactly one place.
//
// Defaults are not copied into a call's Attrs. A reader asks OpAttrs, which
// answers with the call's value or else the schema's default; so the text
// format, structural equality and the serialized kernel table say exactly
// what the call says, and a .rvx written before a default existed still
// runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivet {

/// One attribute an operator accepts.
struct AttrSpec {
  enum class Kind : uint8_t {
    Int,
    Float,
    String,
    Ints,
    Floats,
    Strings,
    Tensor
  };
  std::string name;
  Kind kind;
  bool required = false;
  std::string doc;
  /// The value of the attribute when a call leaves it out; none when it is
  /// required or when its absence means something no value says (clip
  /// without a bound).
  std::optional<AttrValue> defaultValue = std::nullopt;
};

/// The attributes of one operator, in declaration order.
class AttrSchema {
public:
  AttrSchema() = default;
  AttrSchema(std::vector<AttrSpec> Specs);

  auto begin() const { return Specs.begin(); }
  auto end() const { return Specs.end(); }
  size_t size() const { return Specs.size(); }
  bool empty() const { return Specs.empty(); }
  const AttrSpec &operator[](size_t I) const { return Specs[I]; }
  /// Null when the operator has no attribute Name.
  const AttrSpec *find(std::string_view Name) const;
  /// Every default, as attributes.
  const Attrs &defaults() const { return Defaults; }

private:
  std::vector<AttrSpec> Specs;
  Attrs Defaults;
};

/// Registers the schema of operator Op; throws if Op already has one.
void registerAttrSchema(std::string Op, AttrSchema Schema);
/// The schema of operator Op; an empty one when none is registered.
const AttrSchema &attrSchema(std::string_view Op);

/// The attributes of one call of an operator as the operator sees them: the
/// call's own value, else the schema's default. It refers to both; build
/// one where the attributes are read.
class OpAttrs {
public:
  OpAttrs(std::string_view Op, const Attrs &A)
      : Own(A), Defaults(attrSchema(Op).defaults()) {}

  /// True when the call sets Name or the schema has a default for it.
  bool has(const std::string &Name) const {
    return Own.has(Name) || Defaults.has(Name);
  }
  /// The typed getters of Attrs; they throw naming the attribute when it
  /// is neither set nor defaulted.
  int64_t getInt(const std::string &Name) const {
    return pick(Name).getInt(Name);
  }
  double getFloat(const std::string &Name) const {
    return pick(Name).getFloat(Name);
  }
  const std::string &getString(const std::string &Name) const {
    return pick(Name).getString(Name);
  }
  std::vector<int64_t> getInts(const std::string &Name) const {
    return pick(Name).getInts(Name);
  }
  std::vector<double> getFloats(const std::string &Name) const {
    return pick(Name).getFloats(Name);
  }
  /// The call's own attributes, without defaults.
  const Attrs &own() const { return Own; }

private:
  const Attrs &pick(const std::string &Name) const {
    return Own.has(Name) ? Own : Defaults;
  }
  const Attrs &Own;
  const Attrs &Defaults;
};

namespace detail {
struct AttrSchemaRegistrar {
  AttrSchemaRegistrar(std::string Op, std::vector<AttrSpec> Specs) {
    registerAttrSchema(std::move(Op), AttrSchema(std::move(Specs)));
  }
};
} // namespace detail

} // namespace rivet

#define RIVET_ATTRS_CONCAT2(A, B) A##B
#define RIVET_ATTRS_CONCAT(A, B) RIVET_ATTRS_CONCAT2(A, B)
/// RIVET_REGISTER_ATTRS("leaky_relu", {{"alpha", AttrSpec::Kind::Float,
///                                      false, "slope below 0", 0.01}});
#define RIVET_REGISTER_ATTRS(Op, ...)                                          \
  static ::rivet::detail::AttrSchemaRegistrar RIVET_ATTRS_CONCAT(              \
      RivetAttrsReg_, __COUNTER__)(Op, __VA_ARGS__)
