//===- MlOps.cc - ONNX ai.onnx.ml operators -------------------------------===//
//
// Binarizer, ArrayFeatureExtractor, Scaler, Normalizer, LinearRegressor and
// Imputer are compositions of IR operators; those whose output is
// tensor(float) compute in float32 whatever their input, as onnxruntime
// does. TreeEnsemble (ai.onnx.ml opset 5) is the IR tree_ensemble, whose
// attributes are TreeEnsemble-5's (tensor-valued ones as floats or ints),
// followed by its post_transform. LabelEncoder is the IR label_encoder,
// its tensor-valued attributes (opset 4) as lists. The other operators that
// map to or from strings are not read.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "kernels/StringTable.h"

#include <array>
#include <cmath>
#include <optional>

namespace rivet::frontend {
namespace {

using ir::Expr;

constexpr const char *kMl = "ai.onnx.ml";

Expr sub(Expr A, Expr B) { return ir::callOp("subtract", {A, B}); }
Expr mul(Expr A, Expr B) { return ir::callOp("multiply", {A, B}); }

Expr toFloat32(Expr X) {
  return ir::callOp("cast", {std::move(X)},
                    Attrs{{"dtype", std::string("float32")}});
}

/// A float32 constant of shape Sh holding V.
Expr floatConstant(const std::vector<double> &V, Shape Sh) {
  return ir::constant(
      Tensor::fromVector<float>(std::vector<float>(V.begin(), V.end()), Sh));
}

/// A per-feature attribute (Scaler's offset, Imputer's values) as a vector
/// that broadcasts along x's last axis: its length is 1 or the number of
/// features.
Expr featureVector(const std::vector<double> &V) {
  return floatConstant(V, {(int64_t)V.size()});
}

/// A result of one row per sample: [1, k] for a 1-D x, whose result is
/// [k] (a broadcast with shape [1, 1] leaves other ranks as they are).
Expr atLeast2d(Expr E) {
  return ir::callOp("expand", {std::move(E)},
                    Attrs{{"shape", std::vector<int64_t>{1, 1}}});
}

/// post_transform's values: TreeEnsemble-5 numbers them, the older tree
/// operators name them.
constexpr std::array<const char *, 5> kPostTransforms = {
    "NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
/// aggregate_function's values, numbered by TreeEnsemble-5; the names are
/// the IR's (and the older operators').
constexpr std::array<const char *, 4> kAggregates = {"AVERAGE", "SUM", "MIN",
                                                     "MAX"};

/// Scores [N, targets] after post_transform Name (one of kPostTransforms).
Expr postTransform(NodeContext &C, Expr Scores, std::string_view Name) {
  if (Name == "NONE")
    return Scores;
  if (Name == "SOFTMAX")
    return ir::callOp("softmax", {Scores}, Attrs{{"axis", int64_t(-1)}});
  if (Name == "LOGISTIC")
    return ir::callOp("sigmoid", {Scores});
  C.error("post_transform {} is not supported (Rivet applies NONE, SOFTMAX "
          "and LOGISTIC)",
          Name);
}

/// Binarizer: 1 where x > threshold, else 0, in x's dtype. The comparison
/// is in float64: exact for the float32 threshold and for x of any of the
/// operator's dtypes (in an integer x's dtype the threshold would be
/// truncated: -1.5 to -1).
std::vector<Expr> convertBinarizer(NodeContext &C) {
  Expr X = C.bind(C.input(0), "x");
  Expr Wide = ir::callOp("cast", {X}, Attrs{{"dtype", std::string("float64")}});
  Expr Above =
      ir::callOp("greater", {Wide, ir::constant(Tensor::scalar<double>(
                                       C.attrFloat("threshold", 0.0)))});
  return {ir::callOp("cast_like", {Above, X})};
}

/// ArrayFeatureExtractor: x[..., indices] with the indices flattened; a 1-D
/// x gives one row [1, k] (onnxruntime's and ONNX's reference behavior),
/// which a broadcast with shape [1, 1] expresses for any rank.
std::vector<Expr> convertArrayFeatureExtractor(NodeContext &C) {
  Expr Indices = ir::callOp("reshape", {C.input(1)},
                            Attrs{{"newshape", std::vector<int64_t>{-1}}});
  Expr Picked =
      ir::callOp("take", {C.input(0), Indices}, Attrs{{"axis", int64_t(-1)}});
  return {atLeast2d(Picked)};
}

/// Scaler: (x - offset) * scale, per feature.
std::vector<Expr> convertScaler(NodeContext &C) {
  std::vector<double> Offset = C.attrFloats("offset");
  std::vector<double> Scale = C.attrFloats("scale");
  return {mul(sub(toFloat32(C.input(0)), featureVector(Offset)),
              featureVector(Scale))};
}

/// Normalizer: each row (the last axis) divided by its largest value (MAX:
/// the specification's max(X), as onnxruntime reads it; ONNX's reference
/// takes the largest magnitude), its L1 or its L2 norm; a row whose divisor
/// is 0 stays as it is.
std::vector<Expr> convertNormalizer(NodeContext &C) {
  std::string Norm = C.attrString("norm", "MAX");
  Expr X = C.bind(toFloat32(C.input(0)), "x");
  Attrs Row{{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t(1)}};
  Expr Divisor;
  if (Norm == "MAX")
    Divisor = ir::callOp("max", {X}, Row);
  else if (Norm == "L1")
    Divisor = ir::callOp("sum", {ir::callOp("abs", {X})}, Row);
  else if (Norm == "L2")
    Divisor = ir::callOp("sqrt", {ir::callOp("sum", {mul(X, X)}, Row)});
  else
    C.error("attribute 'norm' must be MAX, L1 or L2, got \"{}\"", Norm);
  Divisor = C.bind(Divisor, "divisor");
  Expr Zero =
      ir::callOp("equal", {Divisor, ir::constant(Tensor::scalar<float>(0.0f))});
  return {ir::callOp("where", {Zero, X, ir::callOp("divide", {X, Divisor})})};
}

/// LinearRegressor: x [N, F] times the coefficients ([targets, F], row by
/// row) plus the intercepts, then post_transform.
std::vector<Expr> convertLinearRegressor(NodeContext &C) {
  int64_t Targets = C.attrInt("targets", 1);
  std::vector<double> Coefficients = C.attrFloats("coefficients");
  if (Targets < 1 || Coefficients.empty() ||
      Coefficients.size() % (size_t)Targets != 0)
    C.error("attribute 'coefficients' has {} values, not a multiple of "
            "targets = {}",
            Coefficients.size(), Targets);
  int64_t Features = (int64_t)Coefficients.size() / Targets;
  Expr Y =
      ir::callOp("dense", {toFloat32(C.input(0)),
                           floatConstant(Coefficients, {Targets, Features})});
  if (C.hasAttr("intercepts")) {
    std::vector<double> Intercepts = C.attrFloats("intercepts");
    if ((int64_t)Intercepts.size() != Targets)
      C.error("attribute 'intercepts' has {} values for {} targets",
              Intercepts.size(), Targets);
    Y = ir::callOp("add", {Y, featureVector(Intercepts)});
  }
  return {
      postTransform(C, atLeast2d(Y), C.attrString("post_transform", "NONE"))};
}

/// Imputer: the elements equal to the replaced value (or NaN, when it is
/// NaN) become the imputed value of their feature. Float and integer
/// inputs have their own pair of attributes.
std::vector<Expr> convertImputer(NodeContext &C) {
  std::vector<double> FloatValues = C.attrFloats("imputed_value_floats", {});
  std::vector<int64_t> IntValues = C.attrInts("imputed_value_int64s", {});
  if (FloatValues.empty() == IntValues.empty())
    C.error("expects exactly one of the attributes 'imputed_value_floats' "
            "and 'imputed_value_int64s'");
  Expr X = C.bind(C.input(0), "x");
  Expr Values, Missing;
  if (!FloatValues.empty()) {
    Values = featureVector(FloatValues);
    double Replaced = C.attrFloat("replaced_value_float", 0.0);
    Missing = std::isnan(Replaced)
                  ? ir::callOp("isnan", {X})
                  : ir::callOp("equal", {X, constantLike(Replaced, X)});
  } else {
    Values = ir::constant(
        Tensor::fromVector<int64_t>(IntValues, {(int64_t)IntValues.size()}));
    Expr Replaced = ir::constant(
        Tensor::scalar<int64_t>(C.attrInt("replaced_value_int64", 0)));
    Missing = ir::callOp("equal", {X, ir::callOp("cast_like", {Replaced, X})});
  }
  return {
      ir::callOp("where", {Missing, ir::callOp("cast_like", {Values, X}), X})};
}

//===----------------------------------------------------------------------===//
// Tree ensembles
//===----------------------------------------------------------------------===//

/// A tensor attribute of floats (any float dtype) as doubles.
std::vector<double> tensorFloats(NodeContext &C, std::string_view Name) {
  return C.attrTensor(Name).toDoubleVector();
}

/// TreeEnsemble-5: the IR operator has its attributes; tensors become
/// lists.
std::vector<Expr> convertTreeEnsemble(NodeContext &C) {
  Attrs A;
  int64_t Aggregate = C.attrInt("aggregate_function", 1);
  if (Aggregate < 0 || Aggregate >= (int64_t)kAggregates.size())
    C.error("attribute 'aggregate_function' must be 0 (AVERAGE) to 3 (MAX), "
            "got {}",
            Aggregate);
  A.set("aggregate_function", std::string(kAggregates[(size_t)Aggregate]));
  int64_t Post = C.attrInt("post_transform", 0);
  if (Post < 0 || Post >= (int64_t)kPostTransforms.size())
    C.error("attribute 'post_transform' must be 0 (NONE) to 4 (PROBIT), got "
            "{}",
            Post);
  A.set("n_targets", C.attrInt("n_targets"));
  for (const char *N : {"tree_roots", "nodes_featureids", "nodes_truenodeids",
                        "nodes_trueleafs", "nodes_falsenodeids",
                        "nodes_falseleafs", "leaf_targetids"})
    A.set(N, C.attrInts(N));
  if (C.hasAttr("nodes_missing_value_tracks_true"))
    A.set("nodes_missing_value_tracks_true",
          C.attrInts("nodes_missing_value_tracks_true"));
  std::vector<int64_t> Modes;
  for (double M : tensorFloats(C, "nodes_modes"))
    Modes.push_back((int64_t)M);
  A.set("nodes_modes", Modes);
  A.set("nodes_splits", tensorFloats(C, "nodes_splits"));
  A.set("leaf_weights", tensorFloats(C, "leaf_weights"));
  if (C.hasAttr("membership_values"))
    A.set("membership_values", tensorFloats(C, "membership_values"));
  // nodes_hitrates only helps a runtime order its nodes: not read.
  Expr Scores = ir::callOp("tree_ensemble", {C.input(0)}, std::move(A));
  return {postTransform(C, Scores, kPostTransforms[(size_t)Post])};
}

//===----------------------------------------------------------------------===//
// LabelEncoder
//===----------------------------------------------------------------------===//

/// Sets label_encoder's list Which + "_strings", "_ints" or "_floats" from
/// the one of LabelEncoder's lists Which + "_strings", "_int64s", "_floats"
/// or (opset 4) "_tensor" the node has; returns the dtype of its elements.
DType setEncoderList(NodeContext &C, const std::string &Which, Attrs &A) {
  std::vector<std::string> Given;
  for (const char *Suffix : {"_strings", "_int64s", "_floats", "_tensor"})
    if (C.hasAttr(Which + Suffix))
      Given.push_back(Which + Suffix);
  if (Given.size() != 1)
    C.error("expects exactly one of the attributes {0}_strings, {0}_int64s, "
            "{0}_floats and {0}_tensor, got {1}",
            Which,
            Given.empty() ? "none" : fmt::format("{}", fmt::join(Given, ", ")));
  const std::string &Name = Given[0];
  if (Name.ends_with("_strings")) {
    A.set(Which + "_strings", C.attrStrings(Name));
    return DType::String;
  }
  if (Name.ends_with("_int64s")) {
    A.set(Which + "_ints", C.attrInts(Name));
    return DType::Int64;
  }
  if (Name.ends_with("_floats")) {
    A.set(Which + "_floats", C.attrFloats(Name));
    return DType::Float32;
  }
  Tensor T = C.attrTensor(Name);
  if (isString(T.dtype())) {
    std::vector<std::string> V;
    for (int64_t I = 0; I < T.numel(); ++I)
      V.emplace_back(stringElement(T, I));
    A.set(Which + "_strings", V);
  } else if (isInteger(T.dtype())) {
    A.set(Which + "_ints", T.toIntVector());
  } else if (isFloat(T.dtype())) {
    A.set(Which + "_floats", T.toDoubleVector());
  } else {
    C.error("attribute '{}' must hold strings, integers or floats, got {}",
            Name, T.typeString());
  }
  return T.dtype();
}

/// Sets label_encoder's default for values of dtype Values: default_tensor
/// (opset 4) when the node has it, else the default_* attribute of the
/// values' kind; absent both, the IR's default is ONNX's.
void setEncoderDefault(NodeContext &C, DType Values, Attrs &A) {
  if (C.hasAttr("default_tensor")) {
    Tensor D = C.attrTensor("default_tensor");
    if (D.numel() != 1 || isString(D.dtype()) != isString(Values))
      C.error("attribute 'default_tensor' must be one element like the "
              "values ({}), got {}",
              dtypeName(Values), D.typeString());
    if (isString(Values))
      A.set("default_string", std::string(stringElement(D, 0)));
    else if (isInteger(Values))
      A.set("default_int", D.toIntVector()[0]);
    else
      A.set("default_float", D.toDoubleVector()[0]);
    return;
  }
  if (isString(Values) && C.hasAttr("default_string"))
    A.set("default_string", C.attrString("default_string"));
  else if (isInteger(Values) && C.hasAttr("default_int64"))
    A.set("default_int", C.attrInt("default_int64"));
  else if (isFloat(Values) && C.hasAttr("default_float"))
    A.set("default_float", C.attrFloat("default_float"));
}

/// LabelEncoder-2 and -4: keys to values, each a list of strings, int64s or
/// floats, or (opset 4) a tensor of any of the operator's dtypes, whose
/// values' dtype is the result's.
std::vector<Expr> convertLabelEncoder(NodeContext &C) {
  Attrs A;
  setEncoderList(C, "keys", A);
  DType Values = setEncoderList(C, "values", A);
  setEncoderDefault(C, Values, A);
  A.set("dtype", std::string(dtypeName(Values)));
  return {ir::callOp("label_encoder", {C.input(0)}, std::move(A))};
}

/// LabelEncoder-1: strings to their index in classes_strings (default
/// default_int64), or int64 indices to those strings (default
/// default_string). The direction is x's dtype: declared, or else told by
/// the one default the node sets, as the operator's description says.
std::vector<Expr> convertLabelEncoder1(NodeContext &C) {
  std::vector<std::string> Classes = C.attrStrings("classes_strings");
  std::vector<int64_t> Indices(Classes.size());
  for (size_t I = 0; I < Indices.size(); ++I)
    Indices[I] = (int64_t)I;
  std::optional<bool> FromStrings;
  ir::Type X = C.declaredInputType(0);
  if (const auto *T = X ? X->as<ir::TensorTypeNode>() : nullptr)
    FromStrings = isString(T->dtype);
  else if (C.hasAttr("default_int64") != C.hasAttr("default_string"))
    FromStrings = C.hasAttr("default_int64");
  else
    C.error("cannot tell whether x holds strings or int64 indices: it has "
            "no declared type and the node sets {} of default_int64 and "
            "default_string",
            C.hasAttr("default_int64") ? "both" : "neither");
  Attrs A;
  if (*FromStrings) {
    A.set("keys_strings", Classes);
    A.set("values_ints", Indices);
    A.set("default_int", C.attrInt("default_int64", -1));
  } else {
    A.set("keys_ints", Indices);
    A.set("values_strings", Classes);
    A.set("default_string", C.attrString("default_string", "_Unused"));
  }
  return {ir::callOp("label_encoder", {C.input(0)}, std::move(A))};
}

} // namespace

RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "Binarizer", 1, convertBinarizer);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "ArrayFeatureExtractor", 1,
                              convertArrayFeatureExtractor);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "Scaler", 1, convertScaler);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "Normalizer", 1, convertNormalizer);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "LinearRegressor", 1,
                              convertLinearRegressor);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "Imputer", 1, convertImputer);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "TreeEnsemble", 5, convertTreeEnsemble);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "LabelEncoder", 1, convertLabelEncoder1);
RIVET_REGISTER_ONNX_DOMAIN_OP(kMl, "LabelEncoder", 2, convertLabelEncoder);

} // namespace rivet::frontend
