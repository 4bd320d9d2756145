//===- Cudnn.h - Convolutions on the GPU through cuDNN ----------*- C++ -*-===//
//
// The library kernels' door to cuDNN 9 (libcudnn.so.9, loaded with dlopen
// on first use, never linked): float32 convolutions of NC(D)HW tensors as
// ONNX defines them (cross-correlation, groups, dilations), queued on the
// GPU's one stream. The algorithm is chosen once per problem by timing
// cuDNN's candidates (as PyTorch's cudnn.benchmark does), among those that
// compute in float32 unless TF32 is allowed, and never an FFT (its error
// grows with the extents).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::vm::cuda {

/// y = conv(x, w) over 1 to 3 spatial axes: x [N, C, D...], w [M, C /
/// group, K...], y [N, M, O...]; per spatial axis the stride, dilation and
/// the pads before and after.
struct ConvProblem {
  std::vector<int64_t> x, w, y;
  std::vector<int64_t> strides, dilations, padBegin, padEnd;
  int64_t group = 1;
};

/// Whether libcudnn loads and has every function used (needs no GPU).
bool cudnnLibraryResolves(std::string *Why = nullptr);

/// Whether cuDNN can run here (a GPU and the library); Why says why not.
bool cudnnAvailable(std::string *Why = nullptr);

/// Queues Y = conv(X, W) (+ Bias[m] on output channel m, when given) on the
/// GPU's stream. False, with nothing queued, when cuDNN is not available or
/// cannot take P (pads that differ before and after, more than 3 spatial
/// axes, extents over 32 bits); throws rivet::Error when cuDNN fails.
bool convolution(const ConvProblem &P, const float *X, const float *W,
                 const float *Bias, float *Y, bool AllowTf32);

} // namespace rivet::vm::cuda
