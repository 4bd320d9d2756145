//===- OnnxTensor.cc - ONNX tensors and types to Rivet's ------------------===//
#include "frontend/onnx/OnnxTensor.h"
#include "kernels/Error.h"
#include "kernels/RegularFile.h"
#include "kernels/StringTable.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>

namespace rivet::frontend {

namespace {

/// ONNX's TensorProto.DataType codes of Rivet's dtypes (by number: the
/// protobuf headers Rivet builds with may predate the newer ones).
struct OnnxDType {
  int32_t code;
  DType dtype;
};
constexpr OnnxDType kOnnxDTypes[] = {
    {1, DType::Float32},       {2, DType::UInt8},
    {3, DType::Int8},          {4, DType::UInt16},
    {5, DType::Int16},         {6, DType::Int32},
    {7, DType::Int64},         {8, DType::String},
    {9, DType::Bool},          {10, DType::Float16},
    {11, DType::Float64},      {12, DType::UInt32},
    {13, DType::UInt64},       {16, DType::BFloat16},
    {17, DType::Float8E4M3FN}, {18, DType::Float8E4M3FNUZ},
    {19, DType::Float8E5M2},   {20, DType::Float8E5M2FNUZ},
    {21, DType::UInt4},        {22, DType::Int4},
    {23, DType::Float4E2M1},   {24, DType::Float8E8M0},
    {25, DType::UInt2},        {26, DType::Int2},
};

/// Elements per byte of packed data (raw_data, int32_data) of type T.
int64_t elementsPerByte(DType T) {
  return dtypeInfo(T).bits < 8 ? 8 / dtypeInfo(T).bits : 1;
}

} // namespace

DType dtypeFromOnnx(int32_t OnnxType, const std::string &What) {
  for (const OnnxDType &E : kOnnxDTypes)
    if (E.code == OnnxType)
      return E.dtype;
  const char *Name = OnnxType == 14   ? "COMPLEX64"
                     : OnnxType == 15 ? "COMPLEX128"
                                      : "unknown";
  fail("{}: unsupported element type {} ({})", What, Name, OnnxType);
}

namespace {

/// Copies N elements of a repeated field into Dst, converting.
template <typename Dst, typename Field>
void copyField(const Field &F, Tensor &R, int64_t N, const std::string &What) {
  if ((int64_t)F.size() != N)
    fail("{}: has {} values, but its shape {} needs {}", What, F.size(),
         shapeToString(R.shape()), N);
  Dst *Out = static_cast<Dst *>(R.rawData());
  for (int64_t I = 0; I < N; ++I)
    Out[I] = static_cast<Dst>(F.Get((int)I));
}

/// An external-data offset or length: a decimal integer >= 0.
int64_t externalInt(const std::string &Text, const char *Key,
                    const std::string &What) {
  int64_t V = 0;
  auto [End, Err] = std::from_chars(Text.data(), Text.data() + Text.size(), V);
  if (Err != std::errc() || End != Text.data() + Text.size() || V < 0)
    fail("{}: external data {} '{}' is not an integer >= 0", What, Key, Text);
  return V;
}

std::string readExternal(const onnx::TensorProto &T,
                         const std::string &ModelDir, const std::string &What) {
  std::string Location;
  int64_t Offset = 0, Length = -1;
  for (const auto &KV : T.external_data()) {
    if (KV.key() == "location")
      Location = KV.value();
    else if (KV.key() == "offset")
      Offset = externalInt(KV.value(), "offset", What);
    else if (KV.key() == "length")
      Length = externalInt(KV.value(), "length", What);
  }
  if (Location.empty())
    fail("{}: external data without a location", What);
  if (Location.find("..") != std::string::npos || Location.front() == '/')
    fail("{}: external data location '{}' leaves the model's folder", What,
         Location);
  std::string Path = ModelDir.empty() ? Location : ModelDir + "/" + Location;
  RegularFile File(Path);
  int64_t FileSize = (int64_t)File.size();
  if (Offset > FileSize)
    fail("{}: external data offset {} outside '{}' ({} bytes)", What, Offset,
         Path, FileSize);
  if (Length < 0)
    Length = FileSize - Offset;
  if (Length > FileSize - Offset)
    fail("{}: external data of {} bytes at offset {} overruns '{}' ({} bytes)",
         What, Length, Offset, Path, FileSize);
  std::vector<uint8_t> Data = File.read((uint64_t)Offset, (uint64_t)Length);
  std::string Bytes(Data.begin(), Data.end());
  return Bytes;
}

} // namespace

Tensor tensorFromProto(const onnx::TensorProto &T, const std::string &ModelDir,
                       const std::string &What) {
  DType DT = dtypeFromOnnx(T.data_type(), What);
  Shape Sh;
  for (int64_t D : T.dims()) {
    if (D < 0)
      fail("{}: negative dimension {}", What, D);
    Sh.push_back(D);
  }
  int64_t N = numElements(Sh);
  if ((uint64_t)N > SIZE_MAX / dtypeSize(DT))
    fail("{}: tensor of shape {} is too large", What, shapeToString(Sh));
  size_t Bytes = (size_t)N * dtypeSize(DT);

  // The payload's size is checked before anything is allocated, so a
  // corrupt shape cannot ask for terabytes.
  // 4- and 2-bit types pack 2 or 4 elements per byte, first in the low
  // bits; in memory each has a byte (sign-extended for the signed ones).
  const int64_t PerByte = elementsPerByte(DT);
  auto unpack = [&](auto Packed) {
    Tensor R = Tensor::empty(Sh, DT);
    uint8_t *Out = static_cast<uint8_t *>(R.rawData());
    const int Bits = dtypeInfo(DT).bits;
    for (int64_t I = 0; I < N; ++I) {
      int64_t Byte = I / PerByte;
      uint8_t V = (uint8_t)((uint8_t)Packed(Byte) >> (Bits * (I % PerByte)));
      V &= (uint8_t)((1 << Bits) - 1);
      // Integers are sign-extended values; float4e2m1 keeps its bits.
      Out[I] = dtypeInfo(DT).narrowFloat ? V : intToNarrow(DT, V);
    }
    return R;
  };
  auto fromBytes = [&](const std::string &Raw) {
    if (PerByte > 1) {
      int64_t Need = (N + PerByte - 1) / PerByte;
      if ((int64_t)Raw.size() != Need)
        fail("{}: has {} bytes of data, but {} of {} needs {}", What,
             Raw.size(), shapeToString(Sh), dtypeName(DT), Need);
      return unpack([&](int64_t B) { return (uint8_t)Raw[(size_t)B]; });
    }
    if (Raw.size() != Bytes)
      fail("{}: has {} bytes of data, but {} of {} needs {}", What, Raw.size(),
           shapeToString(Sh), dtypeName(DT), Bytes);
    Tensor R = Tensor::empty(Sh, DT);
    if (Bytes)
      std::memcpy(R.rawData(), Raw.data(), Bytes);
    if (DT == DType::Bool) // normalize to 0/1
      for (int64_t I = 0; I < N; ++I)
        static_cast<uint8_t *>(R.rawData())[I] =
            static_cast<uint8_t *>(R.rawData())[I] != 0;
    return R;
  };

  if (DT == DType::String) {
    // string_data only: raw_data and external data have no string layout.
    if (T.has_raw_data() || T.data_location() == onnx::TensorProto::EXTERNAL)
      fail("{}: a string tensor keeps its values in string_data", What);
    if (T.string_data_size() != N)
      fail("{}: has {} strings, but its shape {} needs {}", What,
           T.string_data_size(), shapeToString(Sh), N);
    Tensor R = Tensor::empty(Sh, DT);
    for (int64_t I = 0; I < N; ++I)
      setStringElement(R, I, T.string_data((int)I));
    return R;
  }
  if (T.data_location() == onnx::TensorProto::EXTERNAL)
    return fromBytes(readExternal(T, ModelDir, What));
  if (T.has_raw_data())
    return fromBytes(T.raw_data());
  if (PerByte > 1) {
    int64_t Need = (N + PerByte - 1) / PerByte;
    if (T.int32_data_size() != Need)
      fail("{}: has {} values, but its shape {} of {} needs {}", What,
           T.int32_data_size(), shapeToString(Sh), dtypeName(DT), Need);
    return unpack([&](int64_t B) { return (uint8_t)T.int32_data((int)B); });
  }
  int64_t Count = 0;
  switch (DT) {
  case DType::Float32: Count = T.float_data_size(); break;
  case DType::Float64: Count = T.double_data_size(); break;
  case DType::Int64: Count = T.int64_data_size(); break;
  case DType::UInt32:
  case DType::UInt64: Count = T.uint64_data_size(); break;
  default: Count = T.int32_data_size(); break;
  }
  if (Count != N)
    fail("{}: has {} values, but its shape {} needs {}", What, Count,
         shapeToString(Sh), N);
  Tensor R = Tensor::empty(Sh, DT);
  switch (DT) {
  case DType::Float32: copyField<float>(T.float_data(), R, N, What); break;
  case DType::Float64: copyField<double>(T.double_data(), R, N, What); break;
  case DType::Int64: copyField<int64_t>(T.int64_data(), R, N, What); break;
  case DType::Int32: copyField<int32_t>(T.int32_data(), R, N, What); break;
  case DType::Int16: copyField<int16_t>(T.int32_data(), R, N, What); break;
  case DType::Int8: copyField<int8_t>(T.int32_data(), R, N, What); break;
  case DType::UInt8: copyField<uint8_t>(T.int32_data(), R, N, What); break;
  case DType::Bool: {
    copyField<uint8_t>(T.int32_data(), R, N, What);
    for (int64_t I = 0; I < N; ++I)
      static_cast<uint8_t *>(R.rawData())[I] =
          static_cast<uint8_t *>(R.rawData())[I] != 0;
    break;
  }
  case DType::UInt16: copyField<uint16_t>(T.int32_data(), R, N, What); break;
  case DType::UInt32: copyField<uint32_t>(T.uint64_data(), R, N, What); break;
  case DType::UInt64: copyField<uint64_t>(T.uint64_data(), R, N, What); break;
  case DType::Float16:  // bit patterns in int32_data
  case DType::BFloat16: // likewise
    copyField<uint16_t>(T.int32_data(), R, N, What);
    break;
  default: // the 8-bit narrow types: bit patterns in int32_data
    copyField<uint8_t>(T.int32_data(), R, N, What);
    break;
  }
  return R;
}

ir::Type typeFromProto(const onnx::TypeProto &T, const std::string &What) {
  switch (T.value_case()) {
  case onnx::TypeProto::kTensorType: {
    const auto &TT = T.tensor_type();
    if (!TT.has_elem_type() || TT.elem_type() == 0)
      return nullptr;
    DType DT = dtypeFromOnnx(TT.elem_type(), What);
    if (!TT.has_shape())
      return ir::tensorTypeUnknownRank(DT);
    std::vector<ir::Dim> Dims;
    for (const auto &D : TT.shape().dim()) {
      if (D.has_dim_value() && D.dim_value() < 0)
        fail("{}: declared dimension {} is negative", What, D.dim_value());
      if (D.has_dim_value())
        Dims.push_back(ir::Dim::constant(D.dim_value()));
      else if (D.has_dim_param() && !D.dim_param().empty())
        Dims.push_back(ir::Dim::symbol(D.dim_param()));
      else
        Dims.push_back(ir::Dim::any());
    }
    return ir::tensorType(std::move(Dims), DT);
  }
  case onnx::TypeProto::kSequenceType: {
    ir::Type Elem = T.sequence_type().has_elem_type()
                        ? typeFromProto(T.sequence_type().elem_type(), What)
                        : nullptr;
    if (!Elem)
      return nullptr;
    // The elements of a sequence share a dtype, not a shape: exporters
    // declare one element's shape, so the rank is left open.
    if (auto *TT = Elem->as<ir::TensorTypeNode>())
      Elem = ir::tensorTypeUnknownRank(TT->dtype);
    return ir::typeCall("List", {Elem});
  }
  case onnx::TypeProto::kOptionalType: {
    ir::Type Elem = T.optional_type().has_elem_type()
                        ? typeFromProto(T.optional_type().elem_type(), What)
                        : nullptr;
    if (!Elem)
      return nullptr;
    return ir::typeCall("Option", {Elem});
  }
  case onnx::TypeProto::VALUE_NOT_SET: return nullptr;
  default: fail("{}: unsupported value type (map or sparse tensor)", What);
  }
}

} // namespace rivet::frontend
