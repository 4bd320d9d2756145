//===- RelationUtil.cc - Shared pieces of operator type relations ---------===//
#include "ir/ops/RelationUtil.h"

#include <cmath>
#include <variant>

namespace rivet::ir {

namespace {

const char *kindName(AttrSpec::Kind K) {
  switch (K) {
  case AttrSpec::Kind::Int: return "int";
  case AttrSpec::Kind::Float: return "float";
  case AttrSpec::Kind::String: return "string";
  case AttrSpec::Kind::Ints: return "ints";
  case AttrSpec::Kind::Floats: return "floats";
  case AttrSpec::Kind::Strings: return "strings";
  case AttrSpec::Kind::Tensor: return "tensor";
  }
  return "?";
}

const char *valueKindName(const AttrValue &V) {
  switch (V.index()) {
  case 0: return "int";
  case 1: return "float";
  case 2: return "string";
  case 3: return "ints";
  case 4: return "floats";
  case 5: return "strings";
  default: return "tensor";
  }
}

bool isEmptyList(const AttrValue &V) {
  if (auto *I = std::get_if<std::vector<int64_t>>(&V))
    return I->empty();
  if (auto *F = std::get_if<std::vector<double>>(&V))
    return F->empty();
  if (auto *S = std::get_if<std::vector<std::string>>(&V))
    return S->empty();
  return false;
}

// Whether a value is acceptable for an attribute of kind K. An integral
// double is an int, an int is a float, and "[]" is an empty list of any kind.
bool kindAccepts(AttrSpec::Kind K, const AttrValue &V) {
  switch (K) {
  case AttrSpec::Kind::Int:
    if (std::holds_alternative<int64_t>(V))
      return true;
    if (auto *D = std::get_if<double>(&V))
      return std::floor(*D) == *D;
    return false;
  case AttrSpec::Kind::Float:
    return std::holds_alternative<double>(V) ||
           std::holds_alternative<int64_t>(V);
  case AttrSpec::Kind::String: return std::holds_alternative<std::string>(V);
  case AttrSpec::Kind::Ints:
    return std::holds_alternative<std::vector<int64_t>>(V) || isEmptyList(V);
  case AttrSpec::Kind::Floats:
    return std::holds_alternative<std::vector<double>>(V) ||
           std::holds_alternative<std::vector<int64_t>>(V) || isEmptyList(V);
  case AttrSpec::Kind::Strings:
    return std::holds_alternative<std::vector<std::string>>(V) ||
           isEmptyList(V);
  case AttrSpec::Kind::Tensor: return std::holds_alternative<Tensor>(V);
  }
  return false;
}

} // namespace

void validateOpAttrs(std::string_view Op, const Attrs &A) {
  const OpInfo &Info = OpRegistry::global().get(Op);
  for (const auto &[Name, Value] : A.items()) {
    const AttrSpec *Spec = nullptr;
    for (const AttrSpec &S : Info.attrs())
      if (S.name == Name)
        Spec = &S;
    if (!Spec) {
      if (Info.attrs().empty())
        fail("{}: unknown attribute '{}' (the operator takes no attributes)",
             Op, Name);
      std::string Known;
      for (const AttrSpec &S : Info.attrs())
        Known += (Known.empty() ? "'" : ", '") + S.name + "'";
      fail("{}: unknown attribute '{}' (expected one of {})", Op, Name, Known);
    }
    if (!kindAccepts(Spec->kind, Value))
      fail("{}: attribute '{}' must be of kind {}, got {}", Op, Name,
           kindName(Spec->kind), valueKindName(Value));
  }
  for (const AttrSpec &S : Info.attrs())
    if (S.required && !A.has(S.name))
      fail("{}: attribute '{}' is required", Op, S.name);
}

bool anyUndecided(const std::vector<Type> &Args) {
  for (const Type &T : Args)
    if (!T || T->kind == TypeKind::Incomplete)
      return true;
  return false;
}

void checkArity(std::string_view Op, const std::vector<Type> &Args,
                size_t Expected) {
  if (Args.size() != Expected)
    fail("{}: expects {} argument{}, got {}", Op, Expected,
         Expected == 1 ? "" : "s", Args.size());
}

const TensorTypeNode &tensorArg(std::string_view Op,
                                const std::vector<Type> &Args, size_t I) {
  if (I >= Args.size())
    fail("{}: missing argument {}", Op, I + 1);
  const auto *T = Args[I] ? Args[I]->as<TensorTypeNode>() : nullptr;
  if (!T)
    failArg(I, "{}: expects a tensor, got {}", Op, typeToString(Args[I]));
  return *T;
}

std::string typeStr(const TensorTypeNode &T) {
  return typeToString(std::make_shared<TensorTypeNode>(T.shape, T.dtype));
}

void requireFloat(std::string_view Op, const TensorTypeNode &T, size_t Arg) {
  if (!isFloat(T.dtype))
    failArg(Arg,
            "{}: expects a float tensor (float16, float32 or float64), got {}",
            Op, typeStr(T));
}

void requireNumeric(std::string_view Op, const TensorTypeNode &T, size_t Arg) {
  if (T.dtype == DType::Bool)
    failArg(Arg, "{}: expects a numeric tensor, got {}", Op, typeStr(T));
}

void requireBool(std::string_view Op, const TensorTypeNode &T, size_t Arg) {
  if (T.dtype != DType::Bool)
    failArg(Arg, "{}: expects a bool tensor, got {}", Op, typeStr(T));
}

void requireIndex(std::string_view Op, const TensorTypeNode &T, size_t Arg) {
  if (T.dtype != DType::Int32 && T.dtype != DType::Int64)
    failArg(Arg, "{}: expects an int32 or int64 index tensor, got {}", Op,
            typeStr(T));
}

void requireSameDType(std::string_view Op, const TensorTypeNode &First,
                      const TensorTypeNode &T, size_t Arg) {
  if (T.dtype != First.dtype)
    failArg(Arg, "{}: dtypes differ (no implicit promotion): {} and {}", Op,
            typeStr(First), typeStr(T));
}

std::optional<Dim> broadcastDim(const Dim &A, const Dim &B) {
  if (A == B)
    return A;
  if (A.isConst() && A.value == 1)
    return B;
  if (B.isConst() && B.value == 1)
    return A;
  if (A.isConst() && B.isConst())
    return std::nullopt;
  // One side is a constant c != 1: the other must be 1 or c, so c it is.
  if (A.isConst())
    return A;
  if (B.isConst())
    return B;
  return Dim::any(); // two different symbols, or a symbol and ?
}

std::optional<std::vector<Dim>>
broadcastArgs(std::string_view Op,
              const std::vector<const TensorTypeNode *> &Ts) {
  for (const TensorTypeNode *T : Ts)
    if (!T->shape)
      return std::nullopt;
  std::vector<Dim> Out = *Ts[0]->shape;
  for (size_t I = 1; I < Ts.size(); ++I) {
    const std::vector<Dim> &S = *Ts[I]->shape;
    size_t Rank = std::max(Out.size(), S.size());
    std::vector<Dim> R(Rank);
    for (size_t K = 0; K < Rank; ++K) {
      // Right-aligned: position K counts from the front of the longer shape.
      size_t FromEnd = Rank - 1 - K;
      bool HasA = FromEnd < Out.size(), HasB = FromEnd < S.size();
      if (!HasA) {
        R[K] = S[S.size() - 1 - FromEnd];
      } else if (!HasB) {
        R[K] = Out[Out.size() - 1 - FromEnd];
      } else {
        const Dim &DA = Out[Out.size() - 1 - FromEnd];
        const Dim &DB = S[S.size() - 1 - FromEnd];
        std::optional<Dim> D = broadcastDim(DA, DB);
        if (!D) {
          std::string Prev = I == 1 ? typeStr(*Ts[0])
                                    : "Tensor[" + dimsToString(Out) + ", " +
                                          std::string(dtypeName(Ts[0]->dtype)) +
                                          "]";
          failArg(
              I,
              "{}: shapes cannot be broadcast (dimension {} vs {}): {} and {}",
              Op, DA.str(), DB.str(), Prev, typeStr(*Ts[I]));
        }
        R[K] = *D;
      }
    }
    Out = std::move(R);
  }
  return Out;
}

std::optional<Dim> mergeEqualDim(const Dim &A, const Dim &B) {
  if (A == B)
    return A;
  if (A.isConst() && B.isConst())
    return std::nullopt;
  if (A.isConst())
    return A;
  if (B.isConst())
    return B;
  if (A.isAny())
    return B;
  if (B.isAny())
    return A;
  return Dim::any(); // two different symbols: equal at run time, name unknown
}

int64_t normalizeAxisFor(std::string_view Op, int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    fail("{}: axis {} is out of range for a tensor of rank {}", Op, Axis, Rank);
  return Axis < 0 ? Axis + Rank : Axis;
}

std::optional<int64_t> optInt(const Attrs &A, const std::string &Name) {
  if (!A.has(Name))
    return std::nullopt;
  return A.getInt(Name);
}

std::optional<std::vector<int64_t>> optInts(const Attrs &A,
                                            const std::string &Name) {
  const AttrValue *V = A.find(Name);
  if (!V)
    return std::nullopt;
  if (isEmptyList(*V))
    return std::vector<int64_t>{};
  return A.getInts(Name);
}

std::optional<std::string> optString(const Attrs &A, const std::string &Name) {
  if (!A.has(Name))
    return std::nullopt;
  return A.getString(Name);
}

std::optional<DType> optDType(std::string_view Op, const Attrs &A,
                              const std::string &Name) {
  OpAttrs OA(Op, A);
  if (!OA.has(Name))
    return std::nullopt;
  std::optional<std::string> S = OA.getString(Name);
  try {
    return parseDType(*S);
  } catch (const Error &) {
    fail("{}: attribute '{}' names an unknown dtype '{}'", Op, Name, *S);
  }
}

std::string dimsToString(const std::vector<Dim> &Dims) {
  std::string S = "(";
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (I)
      S += ", ";
    S += Dims[I].str();
  }
  if (Dims.size() == 1)
    S += ",";
  return S + ")";
}

void require8Bit(std::string_view Op, const TensorTypeNode &T, size_t Arg) {
  if (T.dtype != DType::UInt8 && T.dtype != DType::Int8)
    failArg(Arg, "{}: argument must be uint8 or int8, got {}", Op, typeStr(T));
}

} // namespace rivet::ir
