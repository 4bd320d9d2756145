//===- image_relations_test.cc - Relations of image, RNN, signal ops ------===//

#include "ir/ops/RelationUtil.h"
#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

Type absent() { return f32({c(0)}); }

TEST(ImageRelations, ResizeStatic) {
  Attrs Scales{{"scales", std::vector<double>{1, 1, 2, 1.5}}};
  EXPECT_EQ(rel("resize", {f32({c(1), s("c"), c(4), q()})}, Scales),
            "Tensor[(1, c, 8, ?), float32]");
  EXPECT_EQ(rel("resize", {f32({s("n"), c(3)})},
                Attrs{{"sizes", std::vector<int64_t>{5, 7}}}),
            "Tensor[(5, 7), float32]");
  EXPECT_EQ(rel("resize", {f32({c(2), c(3), c(4)})},
                Attrs{{"sizes", std::vector<int64_t>{6, 6}},
                      {"axes", std::vector<int64_t>{-2, -1}},
                      {"keep_aspect_ratio_policy", std::string("not_larger")}}),
            "Tensor[(2, 5, 6), float32]");
  EXPECT_EQ(rel("resize", {tensorTypeUnknownRank(DType::Float32)}, Scales),
            "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("resize", {f32({c(2)})}), "exactly one of");
  EXPECT_REL_ERROR(relError("resize", {f32({c(2)})}, Scales),
                   "'scales' has 4 values, expected 1");
  EXPECT_REL_ERROR(relError("resize", {f32({c(2)})},
                            Attrs{{"scales", std::vector<double>{2}},
                                  {"mode", std::string("area")}}),
                   "attribute 'mode' is 'area'");
  EXPECT_EQ(rel("resize", {f32({c(8)})},
                Attrs{{"scales", std::vector<double>{0.5}},
                      {"antialias", int64_t(1)}}),
            "Tensor[(4,), float32]");
  EXPECT_REL_ERROR(relError("resize", {f32({c(2)})},
                            Attrs{{"scales", std::vector<double>{2}},
                                  {"antialias", std::string("yes")}}),
                   "antialias");
}

TEST(ImageRelations, ResizeDynamic) {
  EXPECT_EQ(rel("resize_dynamic", {f32({c(1), c(3), c(4), c(4)}), absent(),
                                   f32({c(4)}), i64({c(0)})}),
            "Tensor[(?, ?, ?, ?), float32]");
  EXPECT_EQ(
      rel("resize_dynamic",
          {f32({c(1), c(3), c(4), c(4)}), absent(), f32({c(2)}), i64({c(0)})},
          Attrs{{"axes", std::vector<int64_t>{2, 3}}}),
      "Tensor[(1, 3, ?, ?), float32]");
  EXPECT_REL_ERROR(relError("resize_dynamic", {f32({c(4)}), absent(),
                                               f32({c(1), c(1)}), i64({c(0)})}),
                   "'scales' must be 1-D");
}

TEST(ImageRelations, GridSampleRoiAlignNms) {
  EXPECT_EQ(rel("grid_sample", {f32({s("n"), c(3), c(8), c(8)}),
                                f32({q(), c(5), c(6), c(2)})}),
            "Tensor[(n, 3, 5, 6), float32]");
  EXPECT_REL_ERROR(relError("grid_sample", {f32({c(1), c(3), c(8), c(8)}),
                                            f32({c(2), c(5), c(6), c(2)})}),
                   "batch sizes differ");
  EXPECT_REL_ERROR(relError("grid_sample", {f32({c(1), c(3), c(8), c(8)}),
                                            f32({c(1), c(5), c(6), c(3)})}),
                   "last dimension must be 2");
  // Volumetric (ONNX GridSample-20): three coordinates per location.
  EXPECT_EQ(rel("grid_sample",
                {f32({c(2), c(3), c(4), c(8), c(8)}),
                 f32({q(), c(1), c(5), c(6), c(3)})},
                Attrs{{"mode", std::string("cubic")}}),
            "Tensor[(2, 3, 1, 5, 6), float32]");
  EXPECT_EQ(rel("grid_sample", {unknown(), f32({c(2), s("w"), c(1)})}),
            "Tensor[(2, ?, w), float32]");
  EXPECT_REL_ERROR(relError("grid_sample", {f32({c(1), c(3), c(4), c(8), c(8)}),
                                            f32({c(1), c(5), c(6), c(3)})}),
                   "must have the same rank");
  EXPECT_REL_ERROR(
      relError("grid_sample", {f32({c(1), c(3)}), f32({c(1), c(3)})}),
      "the input must be [N, C, D1, ..., Dr]");
  EXPECT_EQ(
      rel("roi_align",
          {f32({c(1), c(3), c(8), c(8)}), f32({q(), c(4)}), i64({s("r")})},
          Attrs{{"output_height", int64_t(2)}, {"output_width", int64_t(3)}}),
      "Tensor[(r, 3, 2, 3), float32]");
  EXPECT_REL_ERROR(relError("roi_align", {f32({c(1), c(3), c(8), c(8)}),
                                          f32({c(2), c(4)}), i64({c(3)})}),
                   "disagree on the number of rois");
  EXPECT_REL_ERROR(relError("roi_align", {f32({c(1), c(3), c(8), c(8)}),
                                          f32({c(2), c(4)}), f32({c(2)})}),
                   "int32 or int64");
  EXPECT_EQ(rel("non_max_suppression",
                {f32({c(1), c(6), c(4)}), f32({c(1), c(2), c(6)}), i64({c(1)}),
                 f32({c(1)}), absent()}),
            "Tensor[(?, 3), int64]");
  EXPECT_REL_ERROR(relError("non_max_suppression",
                            {f32({c(1), c(6), c(4)}), f32({c(1), c(2), c(5)}),
                             i64({c(1)}), f32({c(1)}), absent()}),
                   "disagree on batch or box count");
}

TEST(ImageRelations, AffineGridCol2ImDeformConv) {
  EXPECT_EQ(rel("affine_grid", {f32({s("n"), c(2), c(3)}), i64({c(4)})}),
            "Tensor[(n, ?, ?, 2), float32]");
  EXPECT_EQ(rel("affine_grid", {f32({q(), q(), q()}), i64({c(5)})}),
            "Tensor[(?, ?, ?, ?, 3), float32]");
  EXPECT_EQ(rel("affine_grid", {unknown(), i64({q()})}), "Tensor[?, float32]");
  EXPECT_REL_ERROR(
      relError("affine_grid", {f32({c(1), c(2), c(4)}), i64({c(4)})}),
      "theta must be [N, 2, 3] or [N, 3, 4]");
  EXPECT_REL_ERROR(
      relError("affine_grid", {f32({c(1), c(3), c(4)}), i64({c(4)})}),
      "size must have 5 entries");
  EXPECT_EQ(rel("col2im", {f32({c(2), c(12), c(6)}), i64({c(2)}), i64({c(2)})}),
            "Tensor[(2, ?, ?, ?), float32]");
  EXPECT_REL_ERROR(
      relError("col2im", {f32({c(2), c(12), c(6)}), i64({c(2)}), i64({c(3)})}),
      "image_shape has 2 entries but block_shape 3");
  EXPECT_REL_ERROR(
      relError("col2im", {f32({c(2), c(12)}), i64({c(2)}), i64({c(2)})}),
      "[N, C * prod(block_shape), L]");
  Type X = f32({c(1), c(4), c(9), c(9)}), W = f32({c(6), c(2), c(3), c(3)});
  Attrs G{{"group", int64_t(2)}, {"strides", std::vector<int64_t>{2, 2}}};
  EXPECT_EQ(rel("deform_conv",
                {X, W, f32({c(1), c(18), q(), q()}), absent(), absent()}, G),
            "Tensor[(1, 6, 4, 4), float32]");
  EXPECT_REL_ERROR(
      relError("deform_conv",
               {X, W, f32({c(1), c(18), c(7), c(7)}), absent(), absent()}, G),
      "do not have the output extent 4");
  EXPECT_REL_ERROR(relError("deform_conv", {X, W, f32({c(1), c(18), q(), q()}),
                                            absent(), absent()}),
                   "expects 2 input channels");
}

TEST(RnnRelations, LstmStackIsItsLayersInTurn) {
  // x [seq, batch, 3], layer 1 of 5 units, layer 2 of 4.
  std::vector<Type> Args = {f32({s("t"), s("n"), c(3)}),
                            f32({c(1), c(20), c(3)}),
                            f32({c(1), c(20), c(5)}),
                            f32({c(1), c(40)}),
                            f32({c(1), s("n"), c(5)}),
                            absent(),
                            f32({c(1), c(16), c(5)}),
                            f32({c(1), c(16), c(4)}),
                            absent(),
                            absent(),
                            absent()};
  EXPECT_EQ(rel("lstm_stack", Args),
            "(Tensor[(t, 1, n, 5), float32], Tensor[(1, n, 5), float32], "
            "Tensor[(1, n, 5), float32], Tensor[(t, 1, n, 4), float32], "
            "Tensor[(1, n, 4), float32], Tensor[(1, n, 4), float32])");
  // Layer 2's w must take layer 1's 5 units: the error names layer 1 (0-
  // based) and the stack's argument 6 (w of layer 2).
  std::vector<Type> Bad = Args;
  Bad[6] = f32({c(1), c(16), c(3)});
  try {
    rel("lstm_stack", Bad);
    ADD_FAILURE() << "no error";
  } catch (const ir::ArgError &E) {
    EXPECT_EQ(E.ArgIndex, 6u);
    EXPECT_REL_ERROR(std::string(E.what()), "lstm_stack layer 1");
  }
  Bad = Args;
  Bad[9] = f16({c(1), s("n"), c(4)});
  try {
    rel("lstm_stack", Bad);
    ADD_FAILURE() << "no error";
  } catch (const ir::ArgError &E) {
    EXPECT_EQ(E.ArgIndex, 9u); // initial_h of layer 2
  }
  Args.pop_back();
  EXPECT_REL_ERROR(relError("lstm_stack", Args), "five operands per layer");
}

TEST(RnnRelations, TupleResults) {
  // x [seq, batch, input], w [dirs, 4H, input], r [dirs, 4H, H].
  std::vector<Type> Lstm = {f32({s("t"), c(2), c(3)}),
                            f32({c(2), c(20), c(3)}),
                            f32({c(2), c(20), c(5)}),
                            absent(),
                            i32({c(0)}),
                            absent(),
                            absent(),
                            absent()};
  EXPECT_EQ(
      rel("lstm", Lstm, Attrs{{"direction", std::string("bidirectional")}}),
      "(Tensor[(t, 2, 2, 5), float32], Tensor[(2, 2, 5), float32], "
      "Tensor[(2, 2, 5), float32])");
  EXPECT_REL_ERROR(relError("lstm", Lstm), "the direction count of w");
  EXPECT_REL_ERROR(relError("lstm", Lstm,
                            Attrs{{"direction", std::string("bidirectional")},
                                  {"hidden_size", int64_t(4)}}),
                   "w is");
  std::vector<Type> Gru = {f32({c(4), c(2), c(3)}),
                           f32({c(1), c(15), c(3)}),
                           f32({c(1), c(15), c(5)}),
                           absent(),
                           i32({c(2)}),
                           f32({c(2), c(1), c(5)})};
  EXPECT_EQ(rel("gru", Gru, Attrs{{"layout", int64_t(1)}}),
            "(Tensor[(4, 2, 1, 5), float32], Tensor[(4, 1, 5), float32])");
  Gru[4] = f32({c(2)});
  EXPECT_REL_ERROR(relError("gru", Gru), "int32 or int64");
  std::vector<Type> Rnn = {f32({c(4), c(2), c(3)}),
                           f32({c(1), c(5), c(3)}),
                           f32({c(1), c(5), c(5)}),
                           absent(),
                           i32({c(0)}),
                           absent()};
  EXPECT_EQ(rel("rnn", Rnn),
            "(Tensor[(4, 1, 2, 5), float32], Tensor[(1, 2, 5), float32])");
  Rnn[1] = f32({c(1), c(5), c(4)});
  EXPECT_REL_ERROR(relError("rnn", Rnn), "the input size of w");
  EXPECT_REL_ERROR(
      relError("rnn", Rnn, Attrs{{"direction", std::string("up")}}),
      "direction must be");
}

TEST(SignalRelations, DftStftWindowsMel) {
  EXPECT_EQ(rel("dft", {f32({c(2), c(8), c(1)})}),
            "Tensor[(2, 8, 2), float32]");
  EXPECT_EQ(rel("dft", {f32({c(2), c(8), c(2)})},
                Attrs{{"onesided", int64_t(1)}, {"dft_length", int64_t(10)}}),
            "Tensor[(2, 6, 2), float32]");
  EXPECT_EQ(rel("dft_dynamic", {f32({c(2), c(8), c(1)}), i64({})}),
            "Tensor[(2, ?, 2), float32]");
  // An axis argument (ONNX DFT-20): the transformed axis is unknown, so every
  // signal extent is, unless no length and no onesided keep them all.
  EXPECT_EQ(rel("dft_dynamic", {f32({c(2), c(8), c(1)}), i64({}), i64({})}),
            "Tensor[(?, ?, 2), float32]");
  EXPECT_EQ(rel("dft_dynamic", {f32({c(2), c(8), c(1)}), i64({c(0)}), i64({})}),
            "Tensor[(2, 8, 2), float32]");
  EXPECT_REL_ERROR(
      relError("dft_dynamic", {f32({c(2), c(8), c(1)}), i64({}), f32({})}),
      "'axis' must be an integer scalar");
  EXPECT_REL_ERROR(relError("dft", {f32({c(2), c(8), c(3)})}),
                   "[..., N, 1] or [..., N, 2]");
  EXPECT_REL_ERROR(
      relError("dft", {f32({c(2), c(8), c(1)})}, Attrs{{"axis", int64_t(-1)}}),
      "axis -1 is out of range");
  EXPECT_EQ(rel("stft", {f32({c(1), c(128), c(1)}), f32({c(16)})},
                Attrs{{"frame_step", int64_t(8)}}),
            "Tensor[(1, 15, 9, 2), float32]");
  EXPECT_EQ(rel("stft_dynamic",
                {f32({c(1), c(128), c(1)}), i64({}), absent(), i64({})}),
            "Tensor[(1, ?, ?, 2), float32]");
  EXPECT_REL_ERROR(relError("stft", {f32({c(1), c(128), c(1)}), absent()}),
                   "'frame_step'");
  EXPECT_EQ(rel("hann_window", {}, Attrs{{"size", int64_t(10)}}),
            "Tensor[(10,), float32]");
  EXPECT_EQ(rel("blackman_window_dynamic", {i32({})},
                Attrs{{"dtype", std::string("float64")}}),
            "Tensor[(?,), float64]");
  EXPECT_REL_ERROR(relError("hamming_window_dynamic", {f32({})}),
                   "integer scalar");
  EXPECT_EQ(rel("mel_weight_matrix", {},
                Attrs{{"num_mel_bins", int64_t(8)},
                      {"dft_length", int64_t(16)},
                      {"sample_rate", int64_t(8000)},
                      {"lower_edge_hertz", 0.0},
                      {"upper_edge_hertz", 4000.0}}),
            "Tensor[(9, 8), float32]");
  EXPECT_EQ(rel("mel_weight_matrix_dynamic",
                {i64({}), i64({}), i64({}), f32({}), f32({})}),
            "Tensor[(?, ?), float32]");
}

} // namespace
