//===- OutputFiles.h - Writing result files all or nothing ------*- C++ -*-===//
//
// Every file Rivet writes (.rvx, output .npy) goes through OutputFiles: each
// is written to a temporary file beside its target and renamed over it only
// when every file of the batch is complete, so a full disk or an error
// leaves the old files (or none), never a truncated one; and a target that
// exists but is not a regular file (a device, a FIFO, a directory) is
// refused rather than replaced.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rivet {

class OutputFiles {
public:
  OutputFiles() = default;
  /// Removes the temporary files of an uncommitted batch.
  ~OutputFiles();
  OutputFiles(const OutputFiles &) = delete;
  OutputFiles &operator=(const OutputFiles &) = delete;

  /// Writes Bytes to a temporary file for Path; throws rivet::Error (and
  /// writes nothing) when Path exists and is not a regular file, or when
  /// the bytes cannot be written.
  void add(const std::string &Path, const void *Bytes, size_t Size);
  /// Renames every temporary file over its target.
  void commit();

private:
  struct Pending {
    std::string target, temp;
  };
  std::vector<Pending> Files;
};

/// Throws rivet::Error when Path exists and is not a regular file.
void checkOutputTarget(const std::string &Path);
/// Whether A and B name the same existing file (hard links included).
bool sameFile(const std::string &A, const std::string &B);

} // namespace rivet
