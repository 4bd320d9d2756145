//===- Strings.cc - Kernels of the operators on string tensors ------------===//
//
// string_normalizer, regex_full_match, string_concat and string_split over
// the handles of kernels/StringTable.h. Case changes are ASCII (the
// "en_US" locale of ONNX's tests); other bytes, UTF-8 included, are kept.
//
//===----------------------------------------------------------------------===//
#include "kernels/StringTable.h"
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <unordered_set>

namespace rivet::kernels {
namespace {

void checkString(const char *Op, const Tensor &T) {
  if (!isString(T.dtype()))
    fail("{}: expected a string tensor, got {}", Op, T.typeString());
}

std::string changeCase(std::string_view S, const std::string &Action) {
  std::string R(S);
  if (Action == "LOWER")
    for (char &C : R)
      C = (char)std::tolower((unsigned char)C);
  else if (Action == "UPPER")
    for (char &C : R)
      C = (char)std::toupper((unsigned char)C);
  return R;
}

/// The strings string_normalizer keeps, case changed.
std::vector<std::string> normalize(const Tensor &X, const Attrs &A) {
  const char *Op = "string_normalizer";
  OpAttrs Own(Op, A);
  bool CaseSensitive = Own.getInt("is_case_sensitive") != 0;
  std::string Action = Own.getString("case_change_action");
  std::unordered_set<std::string> Stop;
  for (const std::string &W : Own.has("stopwords") ? A.getStrings("stopwords")
                                                   : std::vector<std::string>{})
    Stop.insert(CaseSensitive ? W : changeCase(W, "LOWER"));
  std::vector<std::string> Kept;
  for (int64_t I = 0, N = X.numel(); I < N; ++I) {
    std::string_view S = stringElement(X, I);
    std::string Key = CaseSensitive ? std::string(S) : changeCase(S, "LOWER");
    if (!Stop.count(Key))
      Kept.push_back(changeCase(S, Action));
  }
  return Kept;
}

std::vector<TensorMeta> stringNormalizerShape(const std::vector<Tensor> &In,
                                              const Attrs &A) {
  const char *Op = "string_normalizer";
  checkArity(Op, In, 1);
  checkString(Op, In[0]);
  const Shape &S = In[0].shape();
  if (S.size() != 1 && !(S.size() == 2 && S[0] == 1))
    fail("{}: the input must be [C] or [1, C], got {}", Op, shapeToString(S));
  int64_t C = std::max<int64_t>(1, (int64_t)normalize(In[0], A).size());
  return {{S.size() == 1 ? Shape{C} : Shape{1, C}, DType::String}};
}

void stringNormalizerKernel(const std::vector<Tensor> &In,
                            std::vector<Tensor> &Out, const Attrs &A) {
  std::vector<std::string> Kept = normalize(In[0], A);
  if (Kept.empty()) // ONNX: one empty string
    Kept.emplace_back();
  for (size_t I = 0; I < Kept.size(); ++I)
    setStringElement(Out[0], (int64_t)I, Kept[I]);
}

std::vector<TensorMeta> regexFullMatchShape(const std::vector<Tensor> &In,
                                            const Attrs &A) {
  const char *Op = "regex_full_match";
  checkArity(Op, In, 1);
  checkString(Op, In[0]);
  try {
    std::regex R(OpAttrs(Op, A).getString("pattern"));
  } catch (const std::regex_error &E) {
    fail("{}: invalid pattern '{}': {}", Op,
         OpAttrs(Op, A).getString("pattern"), E.what());
  }
  return {{In[0].shape(), DType::Bool}};
}

void regexFullMatchKernel(const std::vector<Tensor> &In,
                          std::vector<Tensor> &Out, const Attrs &A) {
  std::regex R(OpAttrs("regex_full_match", A).getString("pattern"));
  bool *P = Out[0].data<bool>();
  for (int64_t I = 0, N = In[0].numel(); I < N; ++I) {
    std::string_view S = stringElement(In[0], I);
    P[I] = std::regex_match(S.begin(), S.end(), R);
  }
}

std::vector<TensorMeta> stringConcatShape(const std::vector<Tensor> &In,
                                          const Attrs &) {
  const char *Op = "string_concat";
  checkArity(Op, In, 2);
  checkString(Op, In[0]);
  checkString(Op, In[1]);
  return {{opBroadcast(Op, In[0].shape(), In[1].shape()), DType::String}};
}

void stringConcatKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                        const Attrs &) {
  const Tensor &R = Out[0];
  std::array<std::vector<int64_t>, 2> S = {
      broadcastStrides(In[0].shape(), R.shape()),
      broadcastStrides(In[1].shape(), R.shape())};
  forEachStrided<2>(R.shape(), S,
                    [&](int64_t I, const std::array<int64_t, 2> &Off) {
                      std::string Cat(stringElement(In[0], Off[0]));
                      Cat += stringElement(In[1], Off[1]);
                      setStringElement(Out[0], I, Cat);
                    });
}

/// The parts of S: at each occurrence of Delim, or (Delim empty) at runs of
/// whitespace with none at either end; at most MaxSplit splits (< 0: any).
std::vector<std::string_view>
splitString(std::string_view S, const std::string &Delim, int64_t MaxSplit) {
  std::vector<std::string_view> Parts;
  if (Delim.empty()) {
    auto space = [](char C) { return std::isspace((unsigned char)C) != 0; };
    size_t P = 0;
    while (true) {
      while (P < S.size() && space(S[P]))
        ++P;
      if (P == S.size())
        break;
      if (MaxSplit >= 0 && (int64_t)Parts.size() == MaxSplit) {
        size_t End = S.size();
        while (End > P && space(S[End - 1]))
          --End;
        Parts.push_back(S.substr(P, End - P));
        break;
      }
      size_t E = P;
      while (E < S.size() && !space(S[E]))
        ++E;
      Parts.push_back(S.substr(P, E - P));
      P = E;
    }
    return Parts;
  }
  size_t P = 0;
  while (true) {
    size_t E = S.find(Delim, P);
    if (E == std::string_view::npos ||
        (MaxSplit >= 0 && (int64_t)Parts.size() == MaxSplit)) {
      Parts.push_back(S.substr(P));
      break;
    }
    Parts.push_back(S.substr(P, E - P));
    P = E + Delim.size();
  }
  return Parts;
}

std::vector<std::vector<std::string_view>> splitAll(const Tensor &X,
                                                    const Attrs &A) {
  OpAttrs Own("string_split", A);
  std::string Delim = Own.has("delimiter") ? Own.getString("delimiter") : "";
  int64_t MaxSplit = Own.has("maxsplit") ? Own.getInt("maxsplit") : -1;
  std::vector<std::vector<std::string_view>> R;
  for (int64_t I = 0, N = X.numel(); I < N; ++I)
    R.push_back(splitString(stringElement(X, I), Delim, MaxSplit));
  return R;
}

std::vector<TensorMeta> stringSplitShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  const char *Op = "string_split";
  checkArity(Op, In, 1);
  checkString(Op, In[0]);
  int64_t Longest = 0;
  for (const auto &P : splitAll(In[0], A))
    Longest = std::max<int64_t>(Longest, (int64_t)P.size());
  Shape Parts = In[0].shape();
  Parts.push_back(Longest);
  return {{Parts, DType::String}, {In[0].shape(), DType::Int64}};
}

void stringSplitKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  auto All = splitAll(In[0], A);
  int64_t Longest = Out[0].shape().back();
  int64_t *Counts = Out[1].data<int64_t>();
  for (size_t I = 0; I < All.size(); ++I) {
    Counts[I] = (int64_t)All[I].size();
    for (int64_t J = 0; J < Longest; ++J)
      setStringElement(Out[0], (int64_t)I * Longest + J,
                       J < (int64_t)All[I].size() ? All[I][(size_t)J]
                                                  : std::string_view());
  }
}

} // namespace

RIVET_REGISTER_KERNEL("string_normalizer", stringNormalizerKernel,
                      stringNormalizerShape, true);
RIVET_REGISTER_KERNEL("regex_full_match", regexFullMatchKernel,
                      regexFullMatchShape, false);
RIVET_REGISTER_KERNEL("string_concat", stringConcatKernel, stringConcatShape,
                      false);
RIVET_REGISTER_KERNEL("string_split", stringSplitKernel, stringSplitShape,
                      true);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS(
    "string_normalizer",
    {{"case_change_action", AttrKind::String, false, "NONE, LOWER or UPPER",
      "NONE"},
     {"is_case_sensitive", AttrKind::Int, false,
      "1: stop words match case-sensitively", 0},
     {"stopwords", AttrKind::Strings, false, "the strings to remove"},
     {"locale", AttrKind::String, false,
      "the case-change locale (ASCII rules whatever it says)", "en_US"}});
RIVET_REGISTER_ATTRS("regex_full_match",
                     {{"pattern", AttrKind::String, true,
                       "the regular expression a string must match whole"}});
RIVET_REGISTER_ATTRS(
    "string_split",
    {{"delimiter", AttrKind::String, false,
      "where to split; absent or empty: at runs of whitespace"},
     {"maxsplit", AttrKind::Int, false,
      "at most this many splits from the left; absent: every one"}});

} // namespace rivet::kernels
