//===- agreement_cli_test.cc - Every executor gives the reference's answer ===//
//
// Small ONNX models (tests/models/agreement/, from issue 23) on which the
// generated kernels once answered differently from the reference
// interpreter: a gather with an out-of-range index, split sizes that do not
// add up, a slice with step INT64_MIN, a max, min or integer mean over an
// empty axis (of an extent known only at run time) and a cast
// of NaN and infinities to int. Each runs on the interpreter, the VM with
// and without generated kernels, at -O0 and -O3, and from a saved .rvx; all
// must give the interpreter's outputs, or its error.
//
//===----------------------------------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/Tensor.h"
#include "support/RunRivet.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::testing;
using namespace rivet;

namespace {

const fs::path Models = RIVET_SOURCE_DIR "/tests/models/agreement";

struct Outcome {
  RunResult run;
  std::vector<Tensor> outputs;
};

class Agreement : public ::testing::Test {
protected:
  void SetUp() override { Dir = freshTempDir("agreement", currentTestName()); }
  void TearDown() override { fs::remove_all(Dir); }

  /// Runs Model with Inputs ("name=file" in Models) under Flags; a flag of
  /// "rvx" compiles to a .rvx first and runs that.
  Outcome run(const std::string &Model, const std::vector<std::string> &Inputs,
              const std::vector<std::string> &Flags, const std::string &Tag) {
    fs::path Out = Dir / Tag;
    std::string Path = (Models / Model).string();
    std::vector<std::string> Args = {"run"};
    if (!Flags.empty() && Flags[0] == "rvx") {
      std::string Rvx = (Dir / (Tag + ".rvx")).string();
      RunResult C = runRivet({"compile", Path, "-o", Rvx});
      if (C.exitCode != 0)
        return {C, {}}; // a model the compiler refuses: compare the error
      Path = Rvx;
    } else {
      Args.insert(Args.end(), Flags.begin(), Flags.end());
    }
    Args.push_back(Path);
    for (const std::string &I : Inputs) {
      size_t Eq = I.find('=');
      Args.push_back("--input");
      Args.push_back(I.substr(0, Eq + 1) +
                     (Models / I.substr(Eq + 1)).string());
    }
    Args.push_back("--output-dir");
    Args.push_back(Out.string());
    Outcome O{runRivet(Args), {}};
    for (int K = 0; O.run.exitCode == 0; ++K) {
      fs::path P = Out / ("output_" + std::to_string(K) + ".npy");
      if (!fs::exists(P))
        break;
      O.outputs.push_back(readNpy(P.string()));
    }
    return O;
  }

  /// Every executor agrees with the interpreter; returns its outcome.
  Outcome expectAgreement(const std::string &Model,
                          const std::vector<std::string> &Inputs) {
    Outcome Ref = run(Model, Inputs, {"--executor", "interp"}, "interp");
    const std::vector<std::pair<std::string, std::vector<std::string>>>
        Configs = {{"jit", {}},
                   {"nocodegen", {"--codegen", "off"}},
                   {"O0", {"-O0"}},
                   {"O3", {"-O3"}},
                   {"rvx", {"rvx"}}};
    for (const auto &[Tag, Flags] : Configs) {
      SCOPED_TRACE(Model + " on " + Tag);
      Outcome O = run(Model, Inputs, Flags, Tag);
      if ((O.run.exitCode == 0) != (Ref.run.exitCode == 0)) {
        ADD_FAILURE() << "reference:\n"
                      << Ref.run.output << "\nthis executor:\n"
                      << O.run.output;
        continue;
      }
      if (Ref.run.exitCode != 0) {
        EXPECT_TRUE(contains(O.run.output, "error:")) << O.run.output;
        continue;
      }
      EXPECT_EQ(O.outputs.size(), Ref.outputs.size());
      for (size_t K = 0; K < O.outputs.size() && K < Ref.outputs.size(); ++K) {
        const Tensor &A = O.outputs[K], &B = Ref.outputs[K];
        EXPECT_EQ(A.shape(), B.shape()) << "output " << K;
        EXPECT_EQ(A.dtype(), B.dtype()) << "output " << K;
        if (A.shape() != B.shape() || A.dtype() != B.dtype())
          continue;
        EXPECT_EQ(0, std::memcmp(A.rawData(), B.rawData(),
                                 (size_t)A.numel() * dtypeSize(A.dtype())))
            << "output " << K << " differs";
      }
    }
    return Ref;
  }

  fs::path Dir;
};

TEST_F(Agreement, GatherOutOfRangeIndexIsAnErrorEverywhere) {
  Outcome R = expectAgreement("gather_static_oob.onnx",
                              {"x=gather_x.npy", "i=gather_i_oob.npy"});
  EXPECT_NE(R.run.exitCode, 0) << R.run.output;
}

TEST_F(Agreement, SplitSizesNotAddingUpAreAnError) {
  Outcome R = expectAgreement("split_sizes_bad.onnx", {"x=split_x.npy"});
  EXPECT_NE(R.run.exitCode, 0) << R.run.output;
  EXPECT_TRUE(contains(R.run.output, "split")) << R.run.output;
}

TEST_F(Agreement, SliceWithStepInt64MinTakesOneElement) {
  Outcome R = expectAgreement("slice_step_minint.onnx", {"x=slice_x.npy"});
  ASSERT_EQ(R.run.exitCode, 0) << R.run.output;
  ASSERT_EQ(R.outputs.size(), 1u);
  // NumPy: x[:, 2::-2**63] on a (2, 3) input takes column 2 alone.
  EXPECT_EQ(R.outputs[0].shape(), (Shape{2, 1}));
}

TEST_F(Agreement, ReductionsWithoutIdentityOverNoElementsAreAnError) {
  // The reduced extent is known only at run time, so the generated kernel
  // cannot refuse it at compile time (tools/models/export_empty_reductions.py).
  for (const char *Model :
       {"reducemax_dynamic.onnx", "reducemin_dynamic.onnx"}) {
    Outcome R = expectAgreement(Model, {"x=empty_rows_x.npy"});
    EXPECT_TRUE(contains(R.run.output, "reduction over zero elements"))
        << R.run.output;
  }
  Outcome R =
      expectAgreement("reducemean_int_dynamic.onnx", {"x=empty_rows_i.npy"});
  EXPECT_TRUE(contains(R.run.output, "over zero elements")) << R.run.output;
}

TEST_F(Agreement, CastOfNanAndInfinityToIntSaturatesEverywhere) {
  Outcome R = expectAgreement("cast_nan_to_int.onnx", {"x=cast_nan_x.npy"});
  ASSERT_EQ(R.run.exitCode, 0) << R.run.output;
}

} // namespace
