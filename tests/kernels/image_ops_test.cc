//===- image_ops_test.cc - Image, sampling-grid and deform_conv kernels ---===//
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
      "grid [N, O1, ..., Or, r]");
  expectError(
      [&] {
        run("grid_sample", {X, G},
            Attrs{{"padding_mode", std::string("wrap")}});
      },
      "unknown padding_mode 'wrap'");
}

// Values from ONNX's reference implementation (onnx.reference GridSample).
TEST(GridSampleKernel, Volumetric) {
  Tensor X = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2});
  Tensor G =
      f32({-1, -1, -1, 1, 1, 1, 0, 0, 0, 0.5f, -0.25f, 0.75f}, {1, 1, 1, 4, 3});
  auto R = [&](const char *Mode, const char *Pad, int64_t Align) {
    Tensor Y = run("grid_sample", {X, G},
                   Attrs{{"mode", std::string(Mode)},
                         {"padding_mode", std::string(Pad)},
                         {"align_corners", Align}});
    EXPECT_EQ(Y.shape(), (Shape{1, 1, 1, 1, 4}));
    return Y.toDoubleVector();
  };
  auto Near = [](const std::vector<double> &A, const std::vector<double> &B) {
    ASSERT_EQ(A.size(), B.size());
    for (size_t I = 0; I < A.size(); ++I)
      EXPECT_NEAR(A[I], B[I], 1e-5) << "at " << I;
  };
  Near(R("linear", "zeros", 0), {0.125, 1, 4.5, 4.875});
  Near(R("linear", "border", 0), {1, 8, 4.5, 6.5});
  Near(R("linear", "zeros", 1), {1, 8, 4.5, 6});
  // 1.5 rounds to the even 2, outside the input.
  Near(R("nearest", "zeros", 0), {1, 0, 1, 6});
  Near(R("nearest", "border", 0), {1, 8, 1, 6});
  Near(R("cubic", "zeros", 1), {1, 8, 7.5355224609375, 8.81051254272461});
  Near(R("cubic", "border", 1), {1, 8, 4.5, 6.076171875});
  // One spatial axis.
  Near(run("grid_sample", {f32({1, 2}, {1, 1, 2}), f32({-1, 0, 1}, {1, 3, 1})},
           Attrs{{"align_corners", int64_t(1)}})
           .toDoubleVector(),
       {1, 1.5, 2});
}

// Values from ONNX's reference implementation (onnx.reference Resize).
TEST(ResizeKernel, AntialiasStretchesTheFilterWhenDownsampling) {
  Tensor X = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 8});
  auto R = [&](const char *Mode, Attrs A) {
    A.set("mode", std::string(Mode));
    A.set("antialias", int64_t(1));
    return run("resize", {X}, A).toDoubleVector();
  };
  auto Near = [](const std::vector<double> &A, const std::vector<double> &B) {
    ASSERT_EQ(A.size(), B.size());
    for (size_t I = 0; I < A.size(); ++I)
      EXPECT_NEAR(A[I], B[I], 1e-5) << "at " << I;
  };
  Attrs Half{{"scales", std::vector<double>{1, 0.5}}};
  Attrs Three{{"sizes", std::vector<int64_t>{1, 3}}};
  Near(R("linear", Half), {1.625, 3.5, 5.5, 7.375});
  Near(R("linear", Three), {1.9767441749572754, 4.5, 7.023255825042725});
  Near(R("cubic", Half), {1.47265625, 3.482421875, 5.517578125, 7.52734375});
  Near(R("cubic", Three), {1.7880582809448242, 4.5, 7.211941719055176});
  // Upsampling is unchanged, and so is nearest.
  Attrs Up{{"scales", std::vector<double>{1, 1.5}}};
  Tensor Plain = run("resize", {X},
                     Attrs{{"scales", std::vector<double>{1, 1.5}},
                           {"mode", std::string("linear")}});
  Near(R("linear", Up), Plain.toDoubleVector());
  Tensor Nearest =
      run("resize", {X}, Attrs{{"scales", std::vector<double>{1, 0.5}}});
  Near(R("nearest", Half), Nearest.toDoubleVector());
}

// Values from ONNX's reference implementation (onnx.reference AffineGrid).
TEST(AffineGridKernel, TwoDimensional) {
  Tensor Theta = f32({1, 0.5f, 0.2f, -0.3f, 2, 0.1f}, {1, 2, 3});
  Tensor Size = i64({1, 1, 2, 3}, {4});
  Tensor Y = run("affine_grid", {Theta, Size});
  EXPECT_EQ(Y.shape(), (Shape{1, 2, 3, 2}));
  std::vector<double> Want = {-0.7166667, -0.7, -0.05, -0.9, 0.6166667, -1.1,
                              -0.2166667, 1.3,  0.45,  1.1,  1.1166667, 0.9};
  std::vector<double> Got = Y.toDoubleVector();
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], 1e-6) << "at " << I;
  Got = run("affine_grid", {Theta, Size}, Attrs{{"align_corners", int64_t(1)}})
            .toDoubleVector();
  EXPECT_NEAR(Got[0], -1.3, 1e-6);
  EXPECT_NEAR(Got[11], 1.8, 1e-6);
  expectError(
      [&] {
        run("affine_grid", {Theta, i64({1, 1, 2, 3, 4}, {5})});
      },
      "size (1, 1, 2, 3, 4) must be (N, C, H, W)");
}

// Values from ONNX's reference implementation (onnx.reference Col2Im).
TEST(Col2ImKernel, SumsOverlappingBlocks) {
  std::vector<float> V(16);
  for (int I = 0; I < 16; ++I)
    V[(size_t)I] = (float)(I + 1);
  Tensor Y =
      run("col2im", {f32(V, {1, 4, 4}), i64({3, 3}, {2}), i64({2, 2}, {2})});
  expectTensor(Y, f32({1, 7, 6, 12, 34, 22, 11, 27, 16}, {1, 1, 3, 3}));
  // Strides and pads: blocks of 2 every 2 columns over 4 columns padded by 1.
  expectTensor(run("col2im",
                   {f32({1, 2, 3, 4, 5, 6}, {1, 2, 3}), i64({1, 4}, {2}),
                    i64({1, 2}, {2})},
                   Attrs{{"strides", std::vector<int64_t>{1, 2}},
                         {"pads", std::vector<int64_t>{0, 1, 0, 1}}}),
               f32({4, 2, 5, 3}, {1, 1, 1, 4}));
  expectError(
      [&] {
        run("col2im", {f32(V, {1, 4, 4}), i64({3, 4}, {2}), i64({2, 2}, {2})});
      },
      "must be [N, C * 4, 6]");
}

// Values from ONNX's reference implementation (onnx.reference DeformConv).
TEST(DeformConvKernel, MovedTapsAndMask) {
  std::vector<float> V(9);
  for (int I = 0; I < 9; ++I)
    V[(size_t)I] = (float)I;
  Tensor X = f32(V, {1, 1, 3, 3});
  Tensor W = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor Empty = f32({}, {0});
  // Zero offsets: a plain convolution.
  expectTensor(
      run("deform_conv",
          {X, W, Tensor::zeros({1, 8, 2, 2}, DType::Float32), Empty, Empty}),
      f32({27, 37, 57, 67}, {1, 1, 2, 2}));
  std::vector<float> Off(32, 0.0f);
  Off[0] = 0.5f;    // tap (0, 0), along h, at output (0, 0)
  Off[15] = -1.25f; // tap (0, 1), along w, at output (1, 1)
  std::vector<float> Mask(16, 1.0f);
  Mask[9] = 0.5f; // tap (1, 0) at output (0, 1)
  expectTensor(run("deform_conv", {X, W, f32(Off, {1, 8, 2, 2}),
                                   f32({0.25f}, {1}), f32(Mask, {1, 4, 2, 2})}),
               f32({28.75f, 31.25f, 57.25f, 64.75f}, {1, 1, 2, 2}));
  expectError(
      [&] {
        run("deform_conv",
            {X, W, Tensor::zeros({1, 8, 3, 3}, DType::Float32), Empty, Empty});
      },
      "offset must be (1, 8, 2, 2)");
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
