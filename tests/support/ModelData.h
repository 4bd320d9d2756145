//===- ModelData.h - The data sets next to a test model ---------*- C++ -*-===//
#pragma once

#include <algorithm>
#include <filesystem>
#include <vector>

namespace rivet::test {

/// The test_data_set_* directories of a model directory, in order.
inline std::vector<std::filesystem::path>
modelDataSets(const std::filesystem::path &Dir) {
  std::vector<std::filesystem::path> R;
  for (const auto &E : std::filesystem::directory_iterator(Dir))
    if (E.is_directory() &&
        E.path().filename().string().rfind("test_data_set_", 0) == 0)
      R.push_back(E.path());
  std::sort(R.begin(), R.end());
  return R;
}

} // namespace rivet::test
