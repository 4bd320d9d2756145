//===- OnnxTensor.h - ONNX tensors and types to Rivet's ---------*- C++ -*-===//
//
// Internal to the ONNX frontend (includes the ONNX protobuf headers).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"
#include "kernels/Tensor.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace rivet::frontend {

/// The DType of an ONNX TensorProto data type; throws naming What for the
/// types Rivet does not have (string, complex).
DType dtypeFromOnnx(int32_t OnnxType, const std::string &What);

/// Decodes a TensorProto (raw_data, typed fields or external data relative
/// to ModelDir). Every size is validated against the declared shape.
Tensor tensorFromProto(const onnx::TensorProto &T, const std::string &ModelDir,
                       const std::string &What);

/// The IR type of a tensor (or sequence/optional of tensors) ValueInfo type:
/// dim_value -> constant, dim_param -> symbol, neither -> `?`; a missing shape
/// is an unknown rank. Returns null when the type is not given.
ir::Type typeFromProto(const onnx::TypeProto &T, const std::string &What);

} // namespace rivet::frontend
