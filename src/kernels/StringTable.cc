//===- StringTable.cc - The text that string tensors hold -----------------===//
#include "kernels/StringTable.h"

#include "kernels/Error.h"
#include "kernels/Tensor.h"

#include <mutex>
#include <unordered_set>

namespace rivet {

namespace {

struct StringTable {
  std::mutex Lock;
  // Node-based: an element's address never changes, so it is the handle.
  std::unordered_set<std::string> Strings;
};

StringTable &table() {
  static StringTable *T = new StringTable; // never destroyed: handles outlive
  return *T;                               // static destructors
}

} // namespace

StringHandle internString(std::string_view S) {
  if (S.empty())
    return nullptr;
  StringTable &T = table();
  std::lock_guard<std::mutex> G(T.Lock);
  return &*T.Strings.emplace(S).first;
}

size_t internedStringCount() {
  StringTable &T = table();
  std::lock_guard<std::mutex> G(T.Lock);
  return T.Strings.size();
}

std::vector<uint8_t> encodeStrings(const Tensor &T) {
  std::vector<uint8_t> Out;
  for (int64_t I = 0, N = T.numel(); I < N; ++I) {
    std::string_view S = stringElement(T, I);
    if (S.size() > UINT32_MAX)
      fail("a string of {} bytes is too long to save", S.size());
    uint32_t Len = (uint32_t)S.size();
    for (int B = 0; B < 4; ++B)
      Out.push_back((uint8_t)(Len >> (8 * B)));
    Out.insert(Out.end(), S.begin(), S.end());
  }
  return Out;
}

void decodeStrings(Tensor &T, const uint8_t *Data, size_t Size,
                   const std::string &What) {
  size_t Pos = 0;
  for (int64_t I = 0, N = T.numel(); I < N; ++I) {
    if (Size - Pos < 4)
      fail("{}: truncated: string {} of {} has no length", What, I, N);
    uint32_t Len = 0;
    for (int B = 0; B < 4; ++B)
      Len |= (uint32_t)Data[Pos + B] << (8 * B);
    Pos += 4;
    if (Size - Pos < Len)
      fail("{}: truncated: string {} needs {} bytes, {} remain", What, I, Len,
           Size - Pos);
    setStringElement(T, I,
                     std::string_view((const char *)Data + Pos, (size_t)Len));
    Pos += Len;
  }
  if (Pos != Size)
    fail("{}: {} bytes follow the last of {} strings", What, Size - Pos,
         T.numel());
}

Tensor stringTensor(const std::vector<std::string> &Values,
                    const std::vector<int64_t> &S) {
  Tensor T = Tensor::empty(S, DType::String);
  if ((int64_t)Values.size() != T.numel())
    fail("{} strings for a string tensor of shape {}", Values.size(),
         shapeToString(S));
  for (size_t I = 0; I < Values.size(); ++I)
    setStringElement(T, (int64_t)I, Values[I]);
  return T;
}

std::vector<std::string> stringValues(const Tensor &T) {
  std::vector<std::string> R;
  for (int64_t I = 0, N = T.numel(); I < N; ++I)
    R.emplace_back(stringElement(T, I));
  return R;
}

std::string_view stringElement(const Tensor &T, int64_t I) {
  if (!isString(T.dtype()))
    fail("expected a string tensor, got {}", T.typeString());
  return stringOf(static_cast<const StringHandle *>(T.rawData())[I]);
}

void setStringElement(Tensor &T, int64_t I, std::string_view S) {
  if (!isString(T.dtype()))
    fail("expected a string tensor, got {}", T.typeString());
  static_cast<StringHandle *>(T.rawData())[I] = internString(S);
}

} // namespace rivet
