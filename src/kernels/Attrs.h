//===- Attrs.h - Operator attributes ----------------------------*- C++ -*-===//
//
// Attributes are a sorted map from name to a small variant. They are shared by
// the IR (printed and parsed in the text format) and the runtime (serialized
// into the kernel table of a .rvx), so they live here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace rivet {

using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>,
                 std::vector<double>, std::vector<std::string>, Tensor>;

class Attrs {
public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> L)
      : Map(L) {}

  bool has(const std::string &Name) const { return Map.count(Name) != 0; }
  /// The value of Name, or null: one lookup where has() and a getter take
  /// two.
  const AttrValue *find(const std::string &Name) const {
    auto It = Map.find(Name);
    return It == Map.end() ? nullptr : &It->second;
  }
  void set(const std::string &Name, AttrValue V) { Map[Name] = std::move(V); }
  const std::map<std::string, AttrValue> &items() const { return Map; }
  bool empty() const { return Map.empty(); }

  /// Typed getters; throw rivet::Error naming the attribute when it is
  /// missing or has another kind. getInt also accepts a double with an
  /// integral value; getFloat accepts an int.
  int64_t getInt(const std::string &Name) const;
  double getFloat(const std::string &Name) const;
  const std::string &getString(const std::string &Name) const;
  std::vector<int64_t> getInts(const std::string &Name) const;
  std::vector<double> getFloats(const std::string &Name) const;
  const std::vector<std::string> &getStrings(const std::string &Name) const;
  const Tensor &getTensor(const std::string &Name) const;

  /// Getters with a default for optional attributes.
  int64_t getInt(const std::string &Name, int64_t Default) const;
  double getFloat(const std::string &Name, double Default) const;
  std::string getString(const std::string &Name,
                        const std::string &Default) const;
  std::vector<int64_t> getInts(const std::string &Name,
                               const std::vector<int64_t> &Default) const;

  /// Binary serialization (little-endian, self-describing); deserialize
  /// throws rivet::Error on truncated or malformed bytes.
  void serialize(std::vector<uint8_t> &Out) const;
  static Attrs deserialize(const uint8_t *Data, size_t Size, size_t &Pos);

  bool operator==(const Attrs &O) const;
  size_t hash() const;

private:
  std::map<std::string, AttrValue> Map;
};

} // namespace rivet
