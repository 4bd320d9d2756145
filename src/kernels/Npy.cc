//===- Npy.cc - NumPy .npy files ------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/OutputFiles.h"
#include "kernels/RegularFile.h"
#include "kernels/StringTable.h"
#include "kernels/ops/KernelUtil.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

namespace rivet {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

std::string npyDescr(DType T) {
  switch (T) {
  case DType::Bool: return "|b1";
  case DType::Int8: return "|i1";
  case DType::Int16: return "<i2";
  case DType::Int32: return "<i4";
  case DType::Int64: return "<i8";
  case DType::UInt8: return "|u1";
  case DType::Float16: return "<f2";
  case DType::Float32: return "<f4";
  case DType::Float64: return "<f8";
  case DType::UInt16: return "<u2";
  case DType::UInt32: return "<u4";
  case DType::UInt64: return "<u8";
  case DType::BFloat16:
    // NumPy has no bfloat16; ml_dtypes' extension type is not portable.
    fail("npy: bfloat16 tensors cannot be written as .npy (NumPy has no "
         "bfloat16 dtype); cast to float32 first");
  default: break;
  }
  if (isNarrow(T))
    // ml_dtypes saves these as opaque bytes ('<V1'), which lose the type.
    fail("npy: {} tensors cannot be written as .npy (NumPy has no {} dtype "
         "and ml_dtypes saves it as untyped bytes); cast to float32 first",
         dtypeName(T), dtypeName(T));
  fail("npy: invalid dtype code {}", (int)T);
}

DType parseDescr(const std::string &D, const std::string &What) {
  if (D.size() < 3)
    fail("{}: unsupported npy dtype '{}'", What, D);
  char Order = D[0];
  std::string Kind = D.substr(1);
  static const std::map<std::string, DType> Kinds = {
      {"b1", DType::Bool},   {"?", DType::Bool},     {"i1", DType::Int8},
      {"i2", DType::Int16},  {"i4", DType::Int32},   {"i8", DType::Int64},
      {"u1", DType::UInt8},  {"u2", DType::UInt16},  {"u4", DType::UInt32},
      {"u8", DType::UInt64}, {"f2", DType::Float16}, {"f4", DType::Float32},
      {"f8", DType::Float64}};
  auto It = Kinds.find(Kind);
  if (It == Kinds.end() ||
      (Order != '<' && Order != '>' && Order != '|' && Order != '='))
    fail("{}: unsupported npy dtype '{}' (supported: |b1 |i1 <i2 <i4 <i8 |u1 "
         "<u2 <u4 <u8 <f2 <f4 <f8; bfloat16 has no NumPy dtype)",
         What, D);
  DType T = It->second;
  if (Order == '>' && dtypeSize(T) > 1)
    fail("{}: big-endian npy dtype '{}' is not supported", What, D);
  if (Order == '|' && dtypeSize(T) > 1)
    fail("{}: npy dtype '{}' has no byte order", What, D);
  return T;
}

/// A small parser for the header: a Python dict literal with string keys and
/// values that are strings, booleans or tuples of integers.
class HeaderParser {
public:
  HeaderParser(std::string_view Text, const std::string &What)
      : Text(Text), What(What) {}

  struct Value {
    enum Kind { Str, Bool, Tuple } K;
    std::string S;
    bool B = false;
    std::vector<int64_t> Ints;
  };

  std::map<std::string, Value> parseDict() {
    std::map<std::string, Value> R;
    skipSpace();
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++Pos;
        break;
      }
      std::string Key = parseString();
      skipSpace();
      expect(':');
      skipSpace();
      Value V = parseValue();
      if (!R.emplace(Key, std::move(V)).second)
        error(fmt::format("duplicate key '{}'", Key));
      skipSpace();
      if (peek() == ',') {
        ++Pos;
        continue;
      }
      skipSpace();
      expect('}');
      break;
    }
    skipSpace();
    if (Pos != Text.size())
      error("trailing characters after the header dictionary");
    return R;
  }

private:
  std::string_view Text;
  const std::string &What;
  size_t Pos = 0;

  [[noreturn]] void error(const std::string &Msg) {
    fail("{}: malformed npy header at offset {}: {}", What, Pos, Msg);
  }
  char peek() { return Pos < Text.size() ? Text[Pos] : '\0'; }
  void skipSpace() {
    while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                                 Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }
  void expect(char C) {
    if (peek() != C)
      error(fmt::format("expected '{}'", C));
    ++Pos;
  }
  std::string parseString() {
    char Q = peek();
    if (Q != '\'' && Q != '"')
      error("expected a quoted string");
    ++Pos;
    size_t Start = Pos;
    while (Pos < Text.size() && Text[Pos] != Q) {
      if (Text[Pos] == '\\')
        error("escape sequences are not supported");
      ++Pos;
    }
    if (Pos >= Text.size())
      error("unterminated string");
    std::string S(Text.substr(Start, Pos - Start));
    ++Pos;
    return S;
  }
  int64_t parseInt() {
    size_t Start = Pos;
    int64_t V = 0;
    while (Pos < Text.size() && Text[Pos] >= '0' && Text[Pos] <= '9') {
      int D = Text[Pos] - '0';
      if (V > (INT64_MAX - D) / 10)
        error("dimension is too large");
      V = V * 10 + D;
      ++Pos;
    }
    if (Pos == Start)
      error("expected a non-negative integer dimension");
    if (peek() == 'L') // Python 2 long suffix
      ++Pos;
    return V;
  }
  Value parseValue() {
    Value V;
    char C = peek();
    if (C == '\'' || C == '"') {
      V.K = Value::Str;
      V.S = parseString();
    } else if (Text.substr(Pos, 4) == "True") {
      V.K = Value::Bool;
      V.B = true;
      Pos += 4;
    } else if (Text.substr(Pos, 5) == "False") {
      V.K = Value::Bool;
      V.B = false;
      Pos += 5;
    } else if (C == '(') {
      V.K = Value::Tuple;
      ++Pos;
      while (true) {
        skipSpace();
        if (peek() == ')') {
          ++Pos;
          break;
        }
        V.Ints.push_back(parseInt());
        skipSpace();
        if (peek() == ',') {
          ++Pos;
          continue;
        }
        expect(')');
        break;
      }
      if (V.Ints.size() > 64)
        error("too many dimensions");
    } else {
      error("expected a string, True/False or a tuple");
    }
    return V;
  }
};

/// NumPy's fixed-width unicode dtype ('<U5': 5 UTF-32 code units per
/// element, NUL-padded) holds string tensors; its width, or 0 for another
/// descr.
size_t unicodeWidth(const std::string &D, const std::string &What) {
  if (D.size() < 3 || D[1] != 'U' || (D[0] != '<' && D[0] != '|'))
    return 0;
  size_t W = 0;
  for (size_t I = 2; I < D.size(); ++I) {
    if (D[I] < '0' || D[I] > '9' || W > (1u << 20))
      fail("{}: unsupported npy dtype '{}'", What, D);
    W = W * 10 + (size_t)(D[I] - '0');
  }
  if (W == 0)
    fail("{}: npy unicode dtype '{}' has no width", What, D);
  return W;
}

void appendUtf8(std::string &Out, uint32_t C, const std::string &What) {
  if (C < 0x80) {
    Out += (char)C;
  } else if (C < 0x800) {
    Out += (char)(0xc0 | (C >> 6));
    Out += (char)(0x80 | (C & 0x3f));
  } else if (C < 0x10000) {
    if (C >= 0xd800 && C < 0xe000)
      fail("{}: npy string holds a surrogate code point U+{:04X}", What, C);
    Out += (char)(0xe0 | (C >> 12));
    Out += (char)(0x80 | ((C >> 6) & 0x3f));
    Out += (char)(0x80 | (C & 0x3f));
  } else if (C < 0x110000) {
    Out += (char)(0xf0 | (C >> 18));
    Out += (char)(0x80 | ((C >> 12) & 0x3f));
    Out += (char)(0x80 | ((C >> 6) & 0x3f));
    Out += (char)(0x80 | (C & 0x3f));
  } else {
    fail("{}: npy string holds an invalid code point {:#x}", What, C);
  }
}

/// The code points of UTF-8 text S (an error for malformed UTF-8).
std::vector<uint32_t> codePoints(std::string_view S) {
  std::vector<uint32_t> R;
  for (size_t I = 0; I < S.size();) {
    unsigned char B = (unsigned char)S[I];
    int Len = B < 0x80         ? 1
              : (B >> 5) == 6  ? 2
              : (B >> 4) == 14 ? 3
              : (B >> 3) == 30 ? 4
                               : 0;
    if (Len == 0 || I + Len > S.size())
      fail("npy: string element is not valid UTF-8");
    uint32_t C = Len == 1 ? B : B & (0x7f >> Len);
    for (int K = 1; K < Len; ++K) {
      unsigned char Cont = (unsigned char)S[I + K];
      if ((Cont >> 6) != 2)
        fail("npy: string element is not valid UTF-8");
      C = (C << 6) | (Cont & 0x3f);
    }
    R.push_back(C);
    I += (size_t)Len;
  }
  return R;
}

template <typename T> T readLE(const uint8_t *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}

} // namespace

Tensor readNpyBytes(const uint8_t *Data, size_t Size, const std::string &What) {
  if (Size < kMagicLen + 2 || std::memcmp(Data, kMagic, kMagicLen) != 0)
    fail("{}: not a .npy file (bad magic)", What);
  uint8_t Major = Data[6], Minor = Data[7];
  size_t HeaderLen, Pos;
  if (Major == 1) {
    if (Size < 10)
      fail("{}: truncated npy file (header length missing)", What);
    HeaderLen = readLE<uint16_t>(Data + 8);
    Pos = 10;
  } else if (Major == 2 || Major == 3) {
    if (Size < 12)
      fail("{}: truncated npy file (header length missing)", What);
    HeaderLen = readLE<uint32_t>(Data + 8);
    Pos = 12;
  } else {
    fail("{}: unsupported npy format version {}.{}", What, Major, Minor);
  }
  if (Minor != 0)
    fail("{}: unsupported npy format version {}.{}", What, Major, Minor);
  if (Size - Pos < HeaderLen)
    fail("{}: truncated npy file (header of {} bytes, {} available)", What,
         HeaderLen, Size - Pos);
  std::string_view Header(reinterpret_cast<const char *>(Data + Pos),
                          HeaderLen);
  // Version 3.0 headers are UTF-8; the keys and values we accept are ASCII.
  for (char C : Header)
    if ((unsigned char)C >= 0x80 || C == '\0')
      fail("{}: malformed npy header: non-ASCII or NUL byte", What);
  Pos += HeaderLen;

  auto Dict = HeaderParser(Header, What).parseDict();
  for (const auto &[K, V] : Dict)
    if (K != "descr" && K != "fortran_order" && K != "shape")
      fail("{}: malformed npy header: unexpected key '{}'", What, K);
  auto Get = [&](const char *Key, HeaderParser::Value::Kind Kind,
                 const char *KindName) -> const HeaderParser::Value & {
    auto It = Dict.find(Key);
    if (It == Dict.end())
      fail("{}: malformed npy header: missing key '{}'", What, Key);
    if (It->second.K != Kind)
      fail("{}: malformed npy header: '{}' must be {}", What, Key, KindName);
    return It->second;
  };
  const std::string &Descr =
      Get("descr", HeaderParser::Value::Str, "a string").S;
  size_t UWidth = unicodeWidth(Descr, What);
  DType T = UWidth ? DType::String : parseDescr(Descr, What);
  bool Fortran =
      Get("fortran_order", HeaderParser::Value::Bool, "True or False").B;
  Shape Sh = Get("shape", HeaderParser::Value::Tuple, "a tuple").Ints;

  int64_t N;
  try {
    N = numElements(Sh);
  } catch (const Error &E) {
    fail("{}: invalid npy shape: {}", What, E.what());
  }
  size_t ESize = UWidth ? 4 * UWidth : dtypeSize(T);
  if ((uint64_t)N > SIZE_MAX / ESize)
    fail("{}: npy shape {} is too large", What, shapeToString(Sh));
  size_t NBytes = (size_t)N * ESize;
  if (Size - Pos < NBytes)
    fail("{}: truncated npy data: expected {} bytes for {} of {}, found {}",
         What, NBytes, shapeToString(Sh), dtypeName(T), Size - Pos);
  if (Size - Pos > NBytes)
    fail("{}: npy file has {} trailing bytes after the data", What,
         Size - Pos - NBytes);

  Tensor R = Tensor::empty(Sh, T);
  if (UWidth) {
    // Decode each element (in file order) into a handle, then order them.
    Tensor Flat = Tensor::empty({N}, T);
    for (int64_t I = 0; I < N; ++I) {
      std::string Text;
      const uint8_t *E = Data + Pos + (size_t)I * ESize;
      for (size_t K = 0; K < UWidth; ++K) {
        uint32_t C = readLE<uint32_t>(E + 4 * K);
        if (C == 0)
          break;
        appendUtf8(Text, C, What);
      }
      setStringElement(Flat, I, Text);
    }
    if (!Fortran) {
      if (N)
        std::memcpy(R.rawData(), Flat.rawData(), R.nbytes());
    } else {
      std::vector<int64_t> FStride(Sh.size());
      int64_t Acc = 1;
      for (size_t D = 0; D < Sh.size(); ++D) {
        FStride[D] = Acc;
        Acc *= Sh[D];
      }
      kernels::copyStrided(Flat.rawData(), FStride, 0, R.rawData(), Sh,
                           sizeof(StringHandle));
    }
  } else if (!Fortran) {
    if (NBytes)
      std::memcpy(R.rawData(), Data + Pos, NBytes);
  } else {
    // Column-major: element (i0, ..., ik) lives at sum(i_d * FStride_d).
    // Copy to aligned memory first, then gather into row-major order.
    Tensor Raw = Tensor::empty(Sh, T);
    if (NBytes)
      std::memcpy(Raw.rawData(), Data + Pos, NBytes);
    std::vector<int64_t> FStride(Sh.size());
    int64_t Acc = 1;
    for (size_t D = 0; D < Sh.size(); ++D) {
      FStride[D] = Acc;
      Acc *= Sh[D];
    }
    kernels::copyStrided(Raw.rawData(), FStride, 0, R.rawData(), Sh, ESize);
  }
  if (T == DType::Bool) {
    // Normalize any nonzero byte to 1 so bool data is canonical.
    uint8_t *P = static_cast<uint8_t *>(R.rawData());
    for (int64_t I = 0; I < N; ++I)
      P[I] = P[I] != 0;
  }
  return R;
}

Tensor readNpy(const std::string &Path) {
  std::vector<uint8_t> Buf = readRegularFile(Path);
  return readNpyBytes(Buf.data(), Buf.size(), Path);
}

std::vector<uint8_t> npyBytes(const Tensor &T) {
  if (!T.defined() || !T.hasData())
    fail("npy: cannot write a tensor without data");
  // Strings as NumPy's fixed-width unicode, as wide as the longest.
  std::vector<std::vector<uint32_t>> Text;
  size_t UWidth = 1;
  if (isString(T.dtype()))
    for (int64_t I = 0; I < T.numel(); ++I) {
      Text.push_back(codePoints(stringElement(T, I)));
      UWidth = std::max(UWidth, Text.back().size());
    }
  std::string Shape = "(";
  for (size_t I = 0; I < T.shape().size(); ++I)
    Shape += fmt::format("{}{}", I ? ", " : "", T.shape()[I]);
  if (T.shape().size() == 1)
    Shape += ",";
  Shape += ")";
  std::string Header = fmt::format(
      "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
      isString(T.dtype()) ? fmt::format("<U{}", UWidth) : npyDescr(T.dtype()),
      Shape);
  // Pad with spaces so that magic + version + length + header (ending in
  // '\n') is a multiple of 64 bytes.
  bool V2 = Header.size() + 1 + 10 > 65535;
  size_t Prefix = V2 ? 12 : 10;
  size_t Total = Prefix + Header.size() + 1;
  Header.append((64 - Total % 64) % 64, ' ');
  Header += '\n';
  std::vector<uint8_t> Out(kMagic, kMagic + kMagicLen);
  Out.push_back(V2 ? 2 : 1);
  Out.push_back(0);
  uint32_t Len = (uint32_t)Header.size();
  Out.push_back(Len & 0xff);
  Out.push_back((Len >> 8) & 0xff);
  if (V2) {
    Out.push_back((Len >> 16) & 0xff);
    Out.push_back((Len >> 24) & 0xff);
  }
  Out.insert(Out.end(), Header.begin(), Header.end());
  if (isString(T.dtype())) {
    for (const std::vector<uint32_t> &S : Text)
      for (size_t K = 0; K < UWidth; ++K) {
        uint32_t C = K < S.size() ? S[K] : 0;
        for (int B = 0; B < 4; ++B)
          Out.push_back((uint8_t)(C >> (8 * B)));
      }
    return Out;
  }
  const uint8_t *P = static_cast<const uint8_t *>(T.rawData());
  Out.insert(Out.end(), P, P + T.nbytes());
  return Out;
}

void writeNpy(const std::string &Path, const Tensor &T) {
  std::vector<uint8_t> Bytes = npyBytes(T);
  OutputFiles Out;
  Out.add(Path, Bytes.data(), Bytes.size());
  Out.commit();
}

} // namespace rivet
