//===- LabelEncoder.cc - label_encoder (ONNX ai.onnx.ml LabelEncoder) -----===//
//
// Maps each element of x to the value of the equal key, or to the default.
// Keys and values are list attributes (strings, ints or floats, not
// tensors: a serialized executable cannot hold string tensor attributes).
// The values and the default become one table in the result's dtype, so
// the kernel only looks up an index per element and copies that element:
// strings move as handles.
//
//===----------------------------------------------------------------------===//
#include "kernels/LabelEncoder.h"
#include "kernels/StringTable.h"
#include "kernels/ops/KernelUtil.h"

#include <array>
#include <cmath>
#include <unordered_map>

namespace rivet {
namespace {

constexpr const char *kLabelEncoderOp = "label_encoder";

/// The kinds of element a keys_* or values_* list holds.
enum class ListKind { Strings, Ints, Floats };

constexpr std::array<std::pair<ListKind, const char *>, 3> kListKinds = {{
    {ListKind::Strings, "strings"},
    {ListKind::Ints, "ints"},
    {ListKind::Floats, "floats"},
}};

/// The kind of the one list Prefix + "strings", "ints" or "floats" that A
/// sets.
ListKind listKind(const Attrs &A, const std::string &Prefix) {
  std::vector<ListKind> Set;
  std::vector<std::string> Names;
  for (auto [Kind, Suffix] : kListKinds)
    if (A.has(Prefix + Suffix)) {
      Set.push_back(Kind);
      Names.push_back(Prefix + Suffix);
    }
  if (Set.size() != 1)
    fail("{}: expects exactly one of the attributes {}strings, {}ints and "
         "{}floats, got {}",
         kLabelEncoderOp, Prefix, Prefix, Prefix,
         Names.empty() ? "none" : fmt::format("{}", fmt::join(Names, ", ")));
  return Set[0];
}

size_t listSize(const Attrs &A, const std::string &Prefix, ListKind K) {
  switch (K) {
  case ListKind::Strings: return A.getStrings(Prefix + "strings").size();
  case ListKind::Ints: return A.getInts(Prefix + "ints").size();
  case ListKind::Floats: return A.getFloats(Prefix + "floats").size();
  }
  return 0;
}

/// True when elements of dtype T compare with (keys) or hold (values)
/// elements of kind K.
bool holds(ListKind K, DType T) {
  switch (K) {
  case ListKind::Strings: return isString(T);
  case ListKind::Ints: return isInteger(T);
  case ListKind::Floats: return isFloat(T);
  }
  return false;
}

const char *kindName(ListKind K) {
  switch (K) {
  case ListKind::Strings: return "string";
  case ListKind::Ints: return "integer";
  case ListKind::Floats: return "float";
  }
  return "?";
}

/// The result dtype when the call does not say: ONNX's for each list kind.
DType defaultDType(ListKind K) {
  switch (K) {
  case ListKind::Strings: return DType::String;
  case ListKind::Ints: return DType::Int64;
  case ListKind::Floats: return DType::Float32;
  }
  return DType::Float32;
}

} // namespace

DType labelEncoderResultDType(const Attrs &A, DType X) {
  ListKind Keys = listKind(A, "keys_");
  ListKind Values = listKind(A, "values_");
  size_t NumKeys = listSize(A, "keys_", Keys);
  size_t NumValues = listSize(A, "values_", Values);
  if (NumKeys != NumValues)
    fail("{}: {} keys but {} values", kLabelEncoderOp, NumKeys, NumValues);
  DType R =
      *kernels::attrDType(kLabelEncoderOp, A, "dtype", defaultDType(Values));
  if (!holds(Values, R))
    fail("{}: dtype {} cannot hold {} values", kLabelEncoderOp, dtypeName(R),
         kindName(Values));
  if (!holds(Keys, X))
    fail("{}: x must have a {} dtype to match {} keys, got {}", kLabelEncoderOp,
         kindName(Keys), kindName(Keys), dtypeName(X));
  return R;
}

namespace kernels {
namespace {

/// Per element of x, the index of its key, or the number of keys (the
/// default's index) when it has none. Of equal keys the last counts, as in
/// ONNX's reference.
std::vector<int64_t> keyIndices(const Tensor &X, const Attrs &A) {
  std::vector<int64_t> Index((size_t)X.numel());
  auto lookUp = [&](const auto &Keys, const auto *Elements) {
    using Key = typename std::decay_t<decltype(Keys)>::value_type;
    std::unordered_map<Key, int64_t> Map;
    for (size_t K = 0; K < Keys.size(); ++K)
      Map[Keys[K]] = (int64_t)K;
    int64_t Default = (int64_t)Keys.size();
    for (size_t I = 0; I < Index.size(); ++I) {
      auto It = Map.find(Elements[I]);
      Index[I] = It == Map.end() ? Default : It->second;
    }
  };
  switch (listKind(A, "keys_")) {
  case ListKind::Strings: {
    // Equal strings have equal handles.
    std::vector<StringHandle> Keys;
    for (const std::string &K : A.getStrings("keys_strings"))
      Keys.push_back(internString(K));
    lookUp(Keys, static_cast<const StringHandle *>(X.rawData()));
    break;
  }
  case ListKind::Ints: {
    Tensor Wide = X.cast(DType::Int64);
    lookUp(A.getInts("keys_ints"), Wide.data<int64_t>());
    break;
  }
  case ListKind::Floats: {
    // NaN equals nothing in the map; a NaN key matches NaN elements, as in
    // ONNX's reference. -0.0 and 0.0 are one key (equal, same hash).
    std::vector<double> Keys = A.getFloats("keys_floats");
    Tensor Wide = X.cast(DType::Float64);
    const double *P = Wide.data<double>();
    lookUp(Keys, P);
    for (size_t K = Keys.size(); K-- > 0;)
      if (std::isnan(Keys[K])) {
        for (size_t I = 0; I < Index.size(); ++I)
          if (std::isnan(P[I]))
            Index[I] = (int64_t)K;
        break;
      }
    break;
  }
  }
  return Index;
}

/// The values, then the default, in dtype R.
Tensor valueTable(const Attrs &A, DType R) {
  OpAttrs Own(kLabelEncoderOp, A);
  switch (listKind(A, "values_")) {
  case ListKind::Strings: {
    std::vector<std::string> V = A.getStrings("values_strings");
    V.push_back(Own.getString("default_string"));
    Tensor T = Tensor::empty({(int64_t)V.size()}, DType::String);
    for (size_t I = 0; I < V.size(); ++I)
      setStringElement(T, (int64_t)I, V[I]);
    return T;
  }
  case ListKind::Ints: {
    std::vector<int64_t> V = A.getInts("values_ints");
    V.push_back(Own.getInt("default_int"));
    return Tensor::fromVector<int64_t>(V, {(int64_t)V.size()}).cast(R);
  }
  case ListKind::Floats: {
    std::vector<double> V = A.getFloats("values_floats");
    V.push_back(Own.getFloat("default_float"));
    return Tensor::fromVector<double>(V, {(int64_t)V.size()}).cast(R);
  }
  }
  return {};
}

std::vector<TensorMeta> labelEncoderShape(const std::vector<Tensor> &In,
                                          const Attrs &A) {
  checkArity(kLabelEncoderOp, In, 1);
  return {{In[0].shape(), labelEncoderResultDType(A, In[0].dtype())}};
}

void labelEncoderKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                        const Attrs &A) {
  Tensor Table = valueTable(A, Out[0].dtype());
  std::vector<int64_t> Index = keyIndices(In[0], A);
  size_t Size = dtypeSize(Out[0].dtype());
  const char *Src = static_cast<const char *>(Table.rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  for (size_t I = 0; I < Index.size(); ++I)
    std::memcpy(Dst + I * Size, Src + (size_t)Index[I] * Size, Size);
}

} // namespace

RIVET_REGISTER_KERNEL("label_encoder", labelEncoderKernel, labelEncoderShape,
                      false);

RIVET_REGISTER_ATTRS(
    "label_encoder",
    {{"keys_strings", AttrKind::Strings, false,
      "string keys (exactly one keys_* list)"},
     {"keys_ints", AttrKind::Ints, false, "integer keys"},
     {"keys_floats", AttrKind::Floats, false,
      "float keys; a NaN key matches NaN"},
     {"values_strings", AttrKind::Strings, false,
      "string values, one per key (exactly one values_* list)"},
     {"values_ints", AttrKind::Ints, false, "integer values"},
     {"values_floats", AttrKind::Floats, false, "float values"},
     {"default_string", AttrKind::String, false,
      "the result for an element without a key (string values)", "_Unused"},
     {"default_int", AttrKind::Int, false,
      "the result for an element without a key (integer values)", int64_t(-1)},
     {"default_float", AttrKind::Float, false,
      "the result for an element without a key (float values)", -0.0},
     {"dtype", AttrKind::String, false,
      "the result's dtype (default string, int64 or float32, by the values' "
      "kind)"}});

} // namespace kernels
} // namespace rivet
