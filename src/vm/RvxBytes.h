//===- RvxBytes.h - Little-endian byte writer and checked reader -*- C++
//-*-===//
//
// The encoding primitives of the .rvx file: fixed-width little-endian
// integers and length-prefixed strings. The reader checks every access
// against the end of its buffer and reports, as rivet::Error, where it was
// (file and section) and what it was reading. Internal to src/vm.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Error.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace rivet::vm::rvx {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the .rvx reader and writer assume a little-endian host");

/// Appends little-endian values to a byte vector.
class ByteWriter {
public:
  explicit ByteWriter(std::vector<uint8_t> &Out) : Out(Out) {}

  template <typename T> void pod(T V) {
    static_assert(std::is_trivially_copyable_v<T>);
    uint8_t B[sizeof(T)];
    std::memcpy(B, &V, sizeof(T));
    Out.insert(Out.end(), B, B + sizeof(T));
  }
  /// u32 length, then the bytes.
  void str(const std::string &S) {
    if (S.size() > UINT32_MAX)
      fail("cannot write a string of {} bytes", S.size());
    pod<uint32_t>((uint32_t)S.size());
    Out.insert(Out.end(), S.begin(), S.end());
  }
  void bytes(const void *P, size_t N) {
    const uint8_t *B = static_cast<const uint8_t *>(P);
    Out.insert(Out.end(), B, B + N);
  }
  /// Zero bytes up to the next multiple of Align.
  void padTo(size_t Align) {
    while (Out.size() % Align)
      Out.push_back(0);
  }
  size_t size() const { return Out.size(); }

private:
  std::vector<uint8_t> &Out;
};

/// Reads little-endian values from [Data, Data + Size); every read is
/// bounds-checked. Where prefixes every error ("model.rvx: section 'kernels'").
class ByteReader {
public:
  ByteReader(const uint8_t *Data, size_t Size, std::string Where)
      : Data(Data), Size(Size), Where(std::move(Where)) {}

  template <typename T> T pod(const char *What) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T), What);
    T V;
    std::memcpy(&V, Data + Pos, sizeof(T));
    Pos += sizeof(T);
    return V;
  }
  /// A u32 length (at most MaxLen), then that many bytes.
  std::string str(const char *What, uint32_t MaxLen = UINT32_MAX) {
    uint32_t N = pod<uint32_t>(What);
    if (N > MaxLen)
      error("{} is {} bytes long (at most {} allowed)", What, N, MaxLen);
    need(N, What);
    std::string S(reinterpret_cast<const char *>(Data + Pos), N);
    Pos += N;
    return S;
  }
  /// A u32 count of elements that take at least MinElemSize bytes each;
  /// refused when they cannot fit in what is left, so that a corrupt count
  /// cannot cause a huge allocation.
  uint32_t count(size_t MinElemSize, const char *What) {
    size_t At = Pos;
    uint32_t N = pod<uint32_t>(What);
    if (MinElemSize && (uint64_t)N * MinElemSize > remaining())
      error("{} {} at byte {} cannot fit in the {} bytes left", What, N, At,
            remaining());
    return N;
  }
  /// N raw bytes.
  const uint8_t *bytes(size_t N, const char *What) {
    need(N, What);
    const uint8_t *P = Data + Pos;
    Pos += N;
    return P;
  }

  size_t pos() const { return Pos; }
  size_t remaining() const { return Size - Pos; }
  const uint8_t *data() const { return Data; }
  const std::string &where() const { return Where; }

  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> Fmt, Args &&...A) const {
    throw Error(Where + ": " + fmt::format(Fmt, std::forward<Args>(A)...));
  }

private:
  void need(size_t N, const char *What) const {
    if (Size - Pos < N)
      error("truncated: reading {} at byte {} needs {} bytes, {} left", What,
            Pos, N, Size - Pos);
  }

  const uint8_t *Data;
  size_t Size;
  size_t Pos = 0;
  std::string Where;
};

} // namespace rivet::vm::rvx
