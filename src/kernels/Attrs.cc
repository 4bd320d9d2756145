//===- Attrs.cc - Operator attributes -------------------------------------===//
#include "kernels/Attrs.h"

#include <cmath>
#include <cstring>
#include <functional>

namespace rivet {

namespace {

const char *kindName(const AttrValue &V) {
  static const char *Names[] = {"int",    "float",   "string", "ints",
                                "floats", "strings", "tensor"};
  return Names[V.index()];
}

[[noreturn]] void wrongKind(const std::string &Name, const char *Want,
                            const AttrValue &V) {
  fail("attribute '{}' must be {} {}, got {}", Name,
       (Want[0] == 'i') ? "an" : "a", Want, kindName(V));
}

bool integralDouble(double D) {
  return std::isfinite(D) && std::trunc(D) == D &&
         D >= -9.2233720368547758e18 && D < 9.2233720368547758e18;
}

} // namespace

static const AttrValue &lookup(const std::map<std::string, AttrValue> &Map,
                               const std::string &Name) {
  auto It = Map.find(Name);
  if (It == Map.end())
    fail("attribute '{}' is missing", Name);
  return It->second;
}

int64_t Attrs::getInt(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *I = std::get_if<int64_t>(&V))
    return *I;
  if (auto *D = std::get_if<double>(&V)) {
    if (!integralDouble(*D))
      fail("attribute '{}' must be an int, got non-integral float {}", Name,
           *D);
    return (int64_t)*D;
  }
  wrongKind(Name, "int", V);
}

double Attrs::getFloat(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *D = std::get_if<double>(&V))
    return *D;
  if (auto *I = std::get_if<int64_t>(&V))
    return (double)*I;
  wrongKind(Name, "float", V);
}

const std::string &Attrs::getString(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *S = std::get_if<std::string>(&V))
    return *S;
  wrongKind(Name, "string", V);
}

std::vector<int64_t> Attrs::getInts(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *L = std::get_if<std::vector<int64_t>>(&V))
    return *L;
  if (auto *L = std::get_if<std::vector<double>>(&V)) {
    std::vector<int64_t> R;
    for (double D : *L) {
      if (!integralDouble(D))
        fail("attribute '{}' must be ints, got non-integral float {}", Name, D);
      R.push_back((int64_t)D);
    }
    return R;
  }
  wrongKind(Name, "ints", V);
}

std::vector<double> Attrs::getFloats(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *L = std::get_if<std::vector<double>>(&V))
    return *L;
  if (auto *L = std::get_if<std::vector<int64_t>>(&V))
    return std::vector<double>(L->begin(), L->end());
  wrongKind(Name, "floats", V);
}

const std::vector<std::string> &
Attrs::getStrings(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *L = std::get_if<std::vector<std::string>>(&V))
    return *L;
  // `[]` in the text format is an empty int list; it is also an empty
  // string list.
  static const std::vector<std::string> Empty;
  if (auto *L = std::get_if<std::vector<int64_t>>(&V); L && L->empty())
    return Empty;
  wrongKind(Name, "strings", V);
}

const Tensor &Attrs::getTensor(const std::string &Name) const {
  const AttrValue &V = lookup(Map, Name);
  if (auto *T = std::get_if<Tensor>(&V))
    return *T;
  wrongKind(Name, "tensor", V);
}

int64_t Attrs::getInt(const std::string &Name, int64_t Default) const {
  return has(Name) ? getInt(Name) : Default;
}
double Attrs::getFloat(const std::string &Name, double Default) const {
  return has(Name) ? getFloat(Name) : Default;
}
std::string Attrs::getString(const std::string &Name,
                             const std::string &Default) const {
  return has(Name) ? getString(Name) : Default;
}
std::vector<int64_t> Attrs::getInts(const std::string &Name,
                                    const std::vector<int64_t> &Default) const {
  return has(Name) ? getInts(Name) : Default;
}

//===----------------------------------------------------------------------===//
// Serialization: u32 count, then per entry: string name, u8 kind, payload.
// Strings are u32 length + bytes; lists are u32 count + elements; a tensor
// is u8 dtype, u32 rank, i64 dims, u8 hasData, then the raw bytes.
//===----------------------------------------------------------------------===//

namespace {

struct Writer {
  std::vector<uint8_t> &Out;
  template <typename T> void pod(T V) {
    uint8_t B[sizeof(T)];
    std::memcpy(B, &V, sizeof(T));
    Out.insert(Out.end(), B, B + sizeof(T));
  }
  void str(const std::string &S) {
    pod<uint32_t>((uint32_t)S.size());
    Out.insert(Out.end(), S.begin(), S.end());
  }
};

struct Reader {
  const uint8_t *Data;
  size_t Size;
  size_t &Pos;

  void need(size_t N, const char *What) {
    if (Pos > Size || Size - Pos < N)
      fail("attributes: truncated data reading {} at byte {} (need {} bytes, "
           "{} left)",
           What, Pos, N, Pos > Size ? 0 : Size - Pos);
  }
  template <typename T> T pod(const char *What) {
    need(sizeof(T), What);
    T V;
    std::memcpy(&V, Data + Pos, sizeof(T));
    Pos += sizeof(T);
    return V;
  }
  std::string str(const char *What) {
    uint32_t N = pod<uint32_t>(What);
    need(N, What);
    std::string S(reinterpret_cast<const char *>(Data + Pos), N);
    Pos += N;
    return S;
  }
  /// Reads a count of elements each at least ElemSize bytes, rejecting counts
  /// that cannot fit in what is left (so garbage cannot trigger huge
  /// allocations).
  uint32_t count(size_t ElemSize, const char *What) {
    uint32_t N = pod<uint32_t>(What);
    need((size_t)N * ElemSize, What);
    return N;
  }
};

} // namespace

void Attrs::serialize(std::vector<uint8_t> &Out) const {
  Writer W{Out};
  W.pod<uint32_t>((uint32_t)Map.size());
  // Not a structured binding: clang 14 cannot capture one in the lambda.
  for (const auto &KV : Map) {
    const std::string &Name = KV.first;
    const AttrValue &V = KV.second;
    W.str(Name);
    W.pod<uint8_t>((uint8_t)V.index());
    std::visit(
        [&](const auto &X) {
          using T = std::decay_t<decltype(X)>;
          if constexpr (std::is_same_v<T, int64_t> ||
                        std::is_same_v<T, double>) {
            W.pod(X);
          } else if constexpr (std::is_same_v<T, std::string>) {
            W.str(X);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                               std::is_same_v<T, std::vector<double>>) {
            W.pod<uint32_t>((uint32_t)X.size());
            for (auto E : X)
              W.pod(E);
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            W.pod<uint32_t>((uint32_t)X.size());
            for (const auto &E : X)
              W.str(E);
          } else {
            static_assert(std::is_same_v<T, Tensor>);
            if (!X.defined())
              fail("attributes: cannot serialize undefined tensor attribute "
                   "'{}'",
                   Name);
            if (isString(X.dtype()) && X.hasData())
              fail("attributes: cannot serialize string tensor attribute "
                   "'{}' (its elements are process-local handles)",
                   Name);
            W.pod<uint8_t>((uint8_t)X.dtype());
            W.pod<uint32_t>((uint32_t)X.rank());
            for (int64_t D : X.shape())
              W.pod<int64_t>(D);
            W.pod<uint8_t>(X.hasData() ? 1 : 0);
            if (X.hasData() && X.nbytes()) {
              const uint8_t *P = static_cast<const uint8_t *>(X.rawData());
              Out.insert(Out.end(), P, P + X.nbytes());
            }
          }
        },
        V);
  }
}

Attrs Attrs::deserialize(const uint8_t *Data, size_t Size, size_t &Pos) {
  Reader R{Data, Size, Pos};
  Attrs A;
  // Each entry is at least 5 bytes (name length + kind).
  uint32_t N = R.count(5, "attribute count");
  for (uint32_t I = 0; I < N; ++I) {
    std::string Name = R.str("attribute name");
    if (A.has(Name))
      fail("attributes: duplicate attribute '{}'", Name);
    uint8_t Kind = R.pod<uint8_t>("attribute kind");
    switch (Kind) {
    case 0: A.set(Name, R.pod<int64_t>("int attribute")); break;
    case 1: A.set(Name, R.pod<double>("float attribute")); break;
    case 2: A.set(Name, R.str("string attribute")); break;
    case 3: {
      uint32_t C = R.count(8, "ints attribute");
      std::vector<int64_t> L(C);
      for (auto &E : L)
        E = R.pod<int64_t>("ints attribute");
      A.set(Name, std::move(L));
      break;
    }
    case 4: {
      uint32_t C = R.count(8, "floats attribute");
      std::vector<double> L(C);
      for (auto &E : L)
        E = R.pod<double>("floats attribute");
      A.set(Name, std::move(L));
      break;
    }
    case 5: {
      uint32_t C = R.count(4, "strings attribute");
      std::vector<std::string> L;
      for (uint32_t J = 0; J < C; ++J)
        L.push_back(R.str("strings attribute"));
      A.set(Name, std::move(L));
      break;
    }
    case 6: {
      uint8_t Code = R.pod<uint8_t>("tensor dtype");
      if (Code > (uint8_t)kLastDType)
        fail("attributes: tensor attribute '{}' has invalid dtype code {}",
             Name, Code);
      DType Dt = (DType)Code;
      uint32_t Rank = R.count(8, "tensor rank");
      Shape Sh(Rank);
      for (auto &D : Sh) {
        D = R.pod<int64_t>("tensor shape");
        if (D < 0)
          fail("attributes: tensor attribute '{}' has negative extent {}", Name,
               D);
      }
      int64_t NumEl = numElements(Sh);
      uint8_t HasData = R.pod<uint8_t>("tensor data flag");
      if (HasData > 1)
        fail("attributes: tensor attribute '{}' has invalid data flag {}", Name,
             HasData);
      if (!HasData) {
        A.set(Name, Tensor::meta(Sh, Dt));
        break;
      }
      if ((uint64_t)NumEl > (SIZE_MAX / 8))
        fail("attributes: tensor attribute '{}' is too large", Name);
      size_t NBytes = (size_t)NumEl * dtypeSize(Dt);
      R.need(NBytes, "tensor data");
      Tensor T = Tensor::empty(Sh, Dt);
      if (NBytes)
        std::memcpy(T.rawData(), Data + Pos, NBytes);
      Pos += NBytes;
      A.set(Name, std::move(T));
      break;
    }
    default:
      fail("attributes: attribute '{}' has invalid kind tag {}", Name, Kind);
    }
  }
  return A;
}

//===----------------------------------------------------------------------===//
// Equality and hashing. Floats compare bitwise so that equality and the hash
// agree (and NaN attributes equal themselves).
//===----------------------------------------------------------------------===//

namespace {

bool tensorEqual(const Tensor &A, const Tensor &B) {
  if (A.defined() != B.defined())
    return false;
  if (!A.defined())
    return true;
  if (A.dtype() != B.dtype() || A.shape() != B.shape() ||
      A.hasData() != B.hasData())
    return false;
  if (!A.hasData())
    return true;
  return A.nbytes() == 0 ||
         std::memcmp(A.rawData(), B.rawData(), A.nbytes()) == 0;
}

uint64_t bitsOf(double D) {
  uint64_t B;
  std::memcpy(&B, &D, 8);
  return B;
}

void hashCombine(size_t &H, size_t V) {
  H ^= V + 0x9e3779b97f4a7c15ULL + (H << 6) + (H >> 2);
}

} // namespace

bool Attrs::operator==(const Attrs &O) const {
  if (Map.size() != O.Map.size())
    return false;
  for (auto I = Map.begin(), J = O.Map.begin(); I != Map.end(); ++I, ++J) {
    if (I->first != J->first || I->second.index() != J->second.index())
      return false;
    const AttrValue &A = I->second, &B = J->second;
    bool Eq = std::visit(
        [&](const auto &X) -> bool {
          using T = std::decay_t<decltype(X)>;
          const T &Y = std::get<T>(B);
          if constexpr (std::is_same_v<T, double>) {
            return bitsOf(X) == bitsOf(Y);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            if (X.size() != Y.size())
              return false;
            for (size_t K = 0; K < X.size(); ++K)
              if (bitsOf(X[K]) != bitsOf(Y[K]))
                return false;
            return true;
          } else if constexpr (std::is_same_v<T, Tensor>) {
            return tensorEqual(X, Y);
          } else {
            return X == Y;
          }
        },
        A);
    if (!Eq)
      return false;
  }
  return true;
}

size_t Attrs::hash() const {
  size_t H = Map.size();
  for (const auto &[Name, V] : Map) {
    hashCombine(H, std::hash<std::string>()(Name));
    hashCombine(H, V.index());
    std::visit(
        [&](const auto &X) {
          using T = std::decay_t<decltype(X)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            hashCombine(H, std::hash<int64_t>()(X));
          } else if constexpr (std::is_same_v<T, double>) {
            hashCombine(H, std::hash<uint64_t>()(bitsOf(X)));
          } else if constexpr (std::is_same_v<T, std::string>) {
            hashCombine(H, std::hash<std::string>()(X));
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            for (auto E : X)
              hashCombine(H, std::hash<int64_t>()(E));
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            for (auto E : X)
              hashCombine(H, std::hash<uint64_t>()(bitsOf(E)));
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            for (const auto &E : X)
              hashCombine(H, std::hash<std::string>()(E));
          } else {
            if (!X.defined())
              return;
            hashCombine(H, (size_t)X.dtype());
            for (int64_t D : X.shape())
              hashCombine(H, std::hash<int64_t>()(D));
            if (X.hasData()) {
              std::string_view Bytes(static_cast<const char *>(X.rawData()),
                                     X.nbytes());
              hashCombine(H, std::hash<std::string_view>()(Bytes));
            }
          }
        },
        V);
  }
  return H;
}

} // namespace rivet
