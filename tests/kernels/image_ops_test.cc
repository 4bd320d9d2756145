//===- image_ops_test.cc - resize, grid_sample, roi_align, nms kernels ----===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {

Tensor emptyF() { return Tensor::zeros({0}, DType::Float32); }
Tensor emptyI() { return Tensor::zeros({0}, DType::Int64); }

TEST(ResizeKernel, NearestUpsampleHalfPixel) {
  // ONNX test_resize_upsample_scales_nearest.
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor Y = run("resize", {X},
                 Attrs{{"mode", std::string("nearest")},
                       {"scales", std::vector<double>{1, 1, 2, 3}}});
  expectTensor(Y, f32({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                       3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4},
                      {1, 1, 4, 6}));
}

TEST(ResizeKernel, LinearUpsampleHalfPixel) {
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor Y = run("resize", {X},
                 Attrs{{"mode", std::string("linear")},
                       {"scales", std::vector<double>{1, 1, 2, 2}}});
  expectTensor(Y, f32({1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25,
                       3.5, 3, 3.25, 3.75, 4},
                      {1, 1, 4, 4}));
}

TEST(ResizeKernel, AlignCornersUsesScaledLength) {
  // The reference's output length is scale * input (2.4 here, not 2).
  Tensor X = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  Tensor Y = run(
      "resize", {X},
      Attrs{{"mode", std::string("linear")},
            {"coordinate_transformation_mode", std::string("align_corners")},
            {"scales", std::vector<double>{1, 1, 0.6, 0.6}}});
  expectTensor(Y, f32({1, 3.1428571f}, {1, 1, 1, 2}), 1e-5);
}

TEST(ResizeKernel, NearestModesAndSizes) {
  Tensor X = f32({10, 20, 30, 40}, {4});
  auto R = [&](const char *Mode, const char *Coord) {
    return run("resize", {X},
               Attrs{{"nearest_mode", std::string(Mode)},
                     {"coordinate_transformation_mode", std::string(Coord)},
                     {"sizes", std::vector<int64_t>{8}}})
        .toDoubleVector();
  };
  // asymmetric: x / 2 = 0, .5, 1, 1.5, ...
  EXPECT_EQ(R("floor", "asymmetric"),
            (std::vector<double>{10, 10, 20, 20, 30, 30, 40, 40}));
  EXPECT_EQ(R("ceil", "asymmetric"),
            (std::vector<double>{10, 20, 20, 30, 30, 40, 40, 40}));
  EXPECT_EQ(R("round_prefer_ceil", "asymmetric"),
            (std::vector<double>{10, 20, 20, 30, 30, 40, 40, 40}));
  EXPECT_EQ(R("round_prefer_floor", "asymmetric"),
            (std::vector<double>{10, 10, 20, 20, 30, 30, 40, 40}));
}

TEST(ResizeKernel, CubicIdentityAndIntegers) {
  // Scale 1 hits input samples exactly, for every dtype.
  Tensor X = tensor<int32_t>({1, 5, -3, 7}, {2, 2});
  Tensor Y = run("resize", {X},
                 Attrs{{"mode", std::string("cubic")},
                       {"scales", std::vector<double>{1, 1}}});
  expectTensor(Y, tensor<int32_t>({1, 5, -3, 7}, {2, 2}));
  Tensor H = Tensor::fromVector<Half>({Half(1.f), Half(3.f)}, {2});
  Tensor HY = run(
      "resize", {H},
      Attrs{{"mode", std::string("linear")},
            {"coordinate_transformation_mode", std::string("align_corners")},
            {"sizes", std::vector<int64_t>{3}}});
  EXPECT_EQ(HY.toDoubleVector(), (std::vector<double>{1, 2, 3}));
}

TEST(ResizeKernel, TfCropAndResizeExtrapolates) {
  Tensor X = f32({1, 2, 3, 4}, {4});
  Tensor Y = run("resize", {X},
                 Attrs{{"mode", std::string("linear")},
                       {"coordinate_transformation_mode",
                        std::string("tf_crop_and_resize")},
                       {"roi", std::vector<double>{0.5, 1.5}},
                       {"extrapolation_value", 10.0},
                       {"sizes", std::vector<int64_t>{3}}});
  // Coordinates 1.5, 3, 4.5: the last lies outside the input.
  EXPECT_EQ(Y.toDoubleVector(), (std::vector<double>{2.5, 4, 10}));
}

TEST(ResizeKernel, DynamicMatchesStatic) {
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor Scales = f32({1, 1, 2, 2}, {4});
  Attrs A{{"mode", std::string("linear")}};
  Tensor D = run("resize_dynamic", {X, emptyF(), Scales, emptyI()}, A);
  A.set("scales", std::vector<double>{1, 1, 2, 2});
  expectTensor(D, run("resize", {X}, A));
  Tensor S = run("resize_dynamic",
                 {X, emptyF(), emptyF(), i64({1, 1, 3, 1}, {4})}, Attrs{});
  EXPECT_EQ(S.shape(), (Shape{1, 1, 3, 1}));
}

TEST(ResizeKernel, KeepAspectRatioAndAxes) {
  Tensor X = f32(std::vector<float>(12, 1.f), {1, 3, 4});
  Tensor Y = run("resize", {X},
                 Attrs{{"axes", std::vector<int64_t>{1, 2}},
                       {"keep_aspect_ratio_policy", std::string("not_larger")},
                       {"sizes", std::vector<int64_t>{6, 6}}});
  EXPECT_EQ(Y.shape(), (Shape{1, 5, 6})); // scale min(2, 1.5) = 1.5
}

TEST(ResizeKernel, Errors) {
  Tensor X = f32({1, 2, 3, 4}, {2, 2});
  expectError([&] { run("resize", {X}, Attrs{}); }, "exactly one of");
  expectError(
      [&] {
        run("resize", {X}, Attrs{{"scales", std::vector<double>{2}}});
      },
      "'scales' has 1 values, expected 2");
  expectError(
      [&] {
        run("resize", {X},
            Attrs{{"mode", std::string("area")},
                  {"scales", std::vector<double>{2, 2}}});
      },
      "unknown mode 'area'");
  expectError(
      [&] {
        run("resize", {X}, Attrs{{"scales", std::vector<double>{0, 2}}});
      },
      "scales must be positive");
  expectError(
      [&] {
        run("resize", {X},
            Attrs{{"coordinate_transformation_mode",
                   std::string("tf_crop_and_resize")},
                  {"scales", std::vector<double>{2, 2}}});
      },
      "needs 'roi'");
  expectError(
      [&] {
        run("resize", {b8({true}, {1})},
            Attrs{{"scales", std::vector<double>{2}}});
      },
      "numeric");
}

TEST(GridSampleKernel, ModesAndPadding) {
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor G = f32({-1, -1, 0, 0, 1, 1, 0.2f, 0.2f}, {1, 1, 4, 2});
  auto R = [&](const char *Mode, const char *Pad, int64_t Align) {
    return run("grid_sample", {X, G},
               Attrs{{"mode", std::string(Mode)},
                     {"padding_mode", std::string(Pad)},
                     {"align_corners", Align}})
        .toDoubleVector();
  };
  std::vector<double> A = R("bilinear", "zeros", 1);
  EXPECT_NEAR(A[0], 1, 1e-6);
  EXPECT_NEAR(A[1], 2.5, 1e-6);
  EXPECT_NEAR(A[2], 4, 1e-6);
  // Not aligned: -1 maps to -0.5, a quarter of the corner pixel.
  EXPECT_NEAR(R("bilinear", "zeros", 0)[0], 0.25, 1e-6);
  EXPECT_NEAR(R("bilinear", "border", 0)[0], 1, 1e-6);
  EXPECT_NEAR(R("bilinear", "reflection", 0)[0], 1, 1e-6);
  EXPECT_NEAR(R("nearest", "zeros", 1)[3], 4, 1e-6);
  // Bicubic at pixel centers reproduces the pixels.
  std::vector<double> C = R("bicubic", "border", 1);
  EXPECT_NEAR(C[0], 1, 1e-6);
  EXPECT_NEAR(C[2], 4, 1e-6);
  expectError(
      [&] {
        run("grid_sample", {X, f32({0, 0}, {1, 1, 1, 1, 2})});
      },
      "grid [N, H_out, W_out, 2]");
  expectError(
      [&] {
        run("grid_sample", {X, G},
            Attrs{{"padding_mode", std::string("wrap")}});
      },
      "unknown padding_mode 'wrap'");
}

TEST(RoiAlignKernel, AverageOfBilinearSamples) {
  std::vector<float> V(16);
  for (int I = 0; I < 16; ++I)
    V[(size_t)I] = (float)I;
  Tensor X = f32(V, {1, 1, 4, 4});
  Tensor Rois = f32({0, 0, 3, 3}, {1, 4});
  Tensor Idx = i64({0}, {1});
  Attrs A{{"sampling_ratio", int64_t(1)},
          {"coordinate_transformation_mode", std::string("output_half_pixel")}};
  // One sample at (1.5, 1.5): 1.5 * 4 + 1.5.
  expectTensor(run("roi_align", {X, Rois, Idx}, A), f32({7.5}, {1, 1, 1, 1}));
  A.set("coordinate_transformation_mode", std::string("half_pixel"));
  // Shifted by half a pixel: the sample is at (1, 1).
  expectTensor(run("roi_align", {X, Rois, Idx}, A), f32({5}, {1, 1, 1, 1}));
  expectError(
      [&] {
        run("roi_align", {X, Rois, i64({3}, {1})}, A);
      },
      "batch index 3 of roi 0 is out of range");
  expectError(
      [&] {
        run("roi_align", {X, f32({0, 0, 1}, {1, 3}), Idx}, A);
      },
      "rois [R, 4]");
}

TEST(NmsKernel, SuppressByIou) {
  // ONNX test_nonmaxsuppression_suppress_by_IOU.
  Tensor Boxes = f32({0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                      0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101},
                     {1, 6, 4});
  Tensor Scores = f32({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}, {1, 1, 6});
  Tensor Y = run("non_max_suppression", {Boxes, Scores, i64({3}, {1}),
                                         f32({0.5f}, {1}), f32({0}, {1})});
  expectTensor(Y, i64({0, 0, 3, 0, 0, 0, 0, 0, 5}, {3, 3}));
  // At most two per class; a score threshold of 0.7 keeps boxes 3 and 0.
  Tensor Y2 = run("non_max_suppression", {Boxes, Scores, i64({2}, {1}),
                                          f32({0.5f}, {1}), f32({0.7f}, {1})});
  expectTensor(Y2, i64({0, 0, 3, 0, 0, 0}, {2, 3}));
  // Absent max_output_boxes_per_class selects nothing.
  EXPECT_EQ(
      run("non_max_suppression", {Boxes, Scores, emptyI(), emptyF(), emptyF()})
          .shape(),
      (Shape{0, 3}));
  expectError(
      [&] {
        run("non_max_suppression",
            {Boxes, f32({1, 2}, {1, 1, 2}), emptyI(), emptyF(), emptyF()});
      },
      "expected boxes [B, S, 4] and scores [B, C, S]");
}

} // namespace
