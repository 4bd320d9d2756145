//===- RegularFile.h - Opening input files that are files -------*- C++ -*-===//
//
// Every file Rivet reads (.npy, .onnx and its external data, .rvir, .rvx)
// is opened here first: a directory, a device (/dev/zero), a FIFO or a
// socket is refused before anything is read, so an input can neither be
// read without end nor block the process; a regular file is read exactly up
// to the size it had when it was opened.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet {

/// An open regular file (read-only), closed on destruction.
class RegularFile {
public:
  /// Throws rivet::Error "PATH: cannot open: ..." or "PATH: not a regular
  /// file (a FIFO)".
  explicit RegularFile(const std::string &Path);
  ~RegularFile();
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;

  int fd() const { return Fd; }
  uint64_t size() const { return Size; }
  /// The whole file (size() bytes; a file that shrank meanwhile is an
  /// error).
  std::vector<uint8_t> readAll() const { return read(0, Size); }
  /// Bytes [Offset, Offset + Length), which must lie inside the file.
  std::vector<uint8_t> read(uint64_t Offset, uint64_t Length) const;

private:
  std::string Path;
  int Fd = -1;
  uint64_t Size = 0;
};

/// The bytes of the regular file Path (RegularFile(Path).readAll()).
std::vector<uint8_t> readRegularFile(const std::string &Path);

} // namespace rivet
