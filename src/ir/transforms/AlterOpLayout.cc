//===- AlterOpLayout.cc - Blocked layouts for the target's anchors --------===//
//
// Rewrites each conv the target prefers blocked (LayoutPreference.h) into
// conv2d_nchwc, carries the blocked tensor through layout-agnostic consumers
// (elementwise and broadcast ops, pools) and converts back to NCHW only
// where a consumer needs it. Works on let chains whose values may nest calls
// (add(conv(x, w), b), as imported): a value that stays blocked keeps its
// variable, bound to the conversion back just before its first NCHW use, so
// no other use needs rewriting. Weights are converted by layout_transform
// calls; FoldConstant folds those of constant weights. A block that does
// not divide a tensor's channels pads them with zero channels up to a
// multiple of it (pad before the conversion to the block, a negative pad
// after the one back): a conv gets zero filters, zero input channels and a
// zero bias for them, so they stay zero through it, and only ops that keep
// zeros zero carry such a tensor blocked.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/Origin.h"
#include "ir/Visitor.h"
#include "ir/transforms/LayoutPreference.h"
#include "ir/transforms/Pass.h"
#include "kernels/AttrSchema.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <unordered_map>

namespace rivet::ir {
namespace {

std::string blockedLayout(const char *Plain, int64_t Block) {
  return fmt::format("{}{}c", Plain, Block);
}

Expr layoutTransform(Expr X, const std::string &Src, const std::string &Dst) {
  return callOp("layout_transform", {std::move(X)},
                Attrs{{"src_layout", Src}, {"dst_layout", Dst}});
}

const TensorTypeNode *tensorTypeOf(const ExprNode &E) {
  Type T = E.checkedType;
  if (!T)
    if (const auto *V = E.as<VarNode>())
      T = V->typeAnnotation;
  return T ? T->as<TensorTypeNode>() : nullptr;
}
const TensorTypeNode *tensorTypeOf(const Expr &E) { return tensorTypeOf(*E); }

/// [N, C, H, W] with a constant C: the tensors the pass can block.
bool isNchw(const TensorTypeNode *T) {
  return T && T->shape && T->shape->size() == 4 && (*T->shape)[1].isConst();
}

int64_t channels(const TensorTypeNode &T) { return (*T.shape)[1].value; }

/// X (rank Rank) with Extra zeros appended along Axis (cropped when Extra is
/// negative), and as many along Axis2 (rank 4 only), or X itself.
Expr padAxis(Expr X, size_t Rank, size_t Axis, int64_t Extra, size_t Axis2 = 0,
             int64_t Extra2 = 0) {
  if (Extra == 0 && Extra2 == 0)
    return X;
  std::vector<int64_t> Pads(2 * Rank, 0);
  Pads[Rank + Axis] = Extra;
  Pads[Rank + Axis2] += Extra2;
  return callOp("pad", {std::move(X)}, Attrs{{"pads", Pads}});
}

/// Whether an op keeps the padding channels of a blocked tensor zero: it
/// maps zeros to zero, its other operands being zero there too (padded
/// alike) or, for a zero-absorbing op (multiply), scalars.
bool keepsZeros(const CallNode &Call, bool HasScalarOperand) {
  const OpInfo &Info = *Call.callee->as<OpNode>()->info;
  if (Info.zeroAbsorbing)
    return true;
  return !HasScalarOperand && Info.keepsZero && Info.keepsZero(Call.attrs);
}

bool allOnes(const std::vector<Dim> &S) {
  for (const Dim &D : S)
    if (!D.isConst() || D.value != 1)
      return false;
  return true;
}

/// True for an operator that computes each output element from the input
/// elements at the same position: it works on any layout of its operands.
bool isLayoutAgnostic(const OpInfo &Info) {
  if (Info.pattern != FusionPattern::Elementwise &&
      Info.pattern != FusionPattern::Broadcast)
    return false;
  if (Info.numInputs == 0 || Info.listArgument || Info.listResult)
    return false;
  for (const AttrSpec &A : Info.attrs())
    if (A.name == "axis" || A.name == "axes" || A.name == "shape")
      return false;
  return true;
}

/// Rewrites one let chain. Each NCHW value of the chain that has blocked
/// versions is tracked; a value produced blocked stays unbound ("pending")
/// until something needs it in NCHW. A bound value may nest calls (add of a
/// conv and a bias): blockOf decides, without emitting anything, in which
/// block an expression can be computed; buildBlocked then emits it.
class ChainRewriter {
public:
  ChainRewriter(ExprMutator &Outer, const LayoutPreferences &Prefs)
      : Outer(Outer), Prefs(Prefs) {}
  Expr run(const Expr &Chain);

private:
  struct Versions {
    std::map<int64_t, Var> Blocked; // block -> variable in NCHW{block}c
    bool Pending = false;           // the NCHW variable is not bound yet
    int64_t Home = 0; // the block it was produced in, or first converted to
    /// The origin of the call that made it: its conversion back to NCHW
    /// is that call's value (ir/Origin.h).
    std::string Origin;
  };

  Var emit(const std::string &Hint, Expr Value) {
    Var V = var(Hint);
    Out.push_back({V, std::move(Value)});
    return V;
  }
  /// Binds a pending variable to the conversion back to NCHW.
  void materialize(const Expr &E);
  /// E, an expression the pass leaves NCHW: its pending variables are
  /// bound first.
  Expr plain(const Expr &E) {
    for (const Var &FV : freeVars(E))
      materialize(FV);
    return Outer.mutate(E);
  }
  /// X (a variable or a constant in NCHW) in NCHW{Block}c, bound once.
  Expr toBlocked(const Expr &X, int64_t Block);
  /// R, a tensor of C channels in NCHW{From}c (0: NCHW), in NCHW{To}c:
  /// padded or cropped to the blocks' multiples of C; two blocks of which
  /// one pads convert through NCHW.
  Expr reblock(Expr R, int64_t C, int64_t From, int64_t To);
  /// The layout_transform of E (a variable, a constant or an expression),
  /// let-bound when E is a variable or a constant.
  Expr convert(const Expr &E, const std::string &Src, const std::string &Dst,
               const std::string &Hint);

  /// The block E is computed in when rewritten, 0 when it stays NCHW.
  int64_t blockOf(const Expr &E);
  /// The conv layout the target wants for Call, asked once per call.
  std::optional<ConvLayout> convChoice(const CallNode &Call);
  int64_t convBlock(const CallNode &Call);
  int64_t poolBlock(const CallNode &Call);
  /// The block of an agnostic call and the role of each operand.
  enum class Operand { Full, Keep, Channels3, Channels4 };
  int64_t agnosticBlock(const CallNode &Call, std::vector<Operand> *Roles);

  /// E computed in NCHW{Block}c.
  Expr buildBlocked(const Expr &E, int64_t Block);
  /// A call with blockOf(Call) > 0, computed in that block.
  Expr buildCall(const CallNode &Call);

  void noteTransform(const Var &V, const CallNode &Call);

  ExprMutator &Outer;
  const LayoutPreferences &Prefs;
  std::vector<std::pair<Var, Expr>> Out;
  std::unordered_map<const ExprNode *, Versions> Vers;
  std::unordered_map<const CallNode *, std::optional<ConvLayout>> Choices;
};

/// The pass's traversal: every let chain of every non-primitive function.
class AlterLayout : public ExprMutator {
public:
  explicit AlterLayout(const LayoutPreferences &Prefs) : Prefs(Prefs) {}
  Expr visitFunction(const FunctionNode &N, const Expr &Self) override {
    if (isPrimitiveFunction(Self))
      return Self;
    return ExprMutator::visitFunction(N, Self);
  }
  Expr visitLet(const LetNode &, const Expr &Self) override {
    return ChainRewriter(*this, Prefs).run(Self);
  }

private:
  const LayoutPreferences &Prefs;
};

std::string layoutOf(int64_t Block) {
  return Block ? blockedLayout("NCHW", Block) : "NCHW";
}

Expr ChainRewriter::reblock(Expr R, int64_t C, int64_t From, int64_t To) {
  if (From == To)
    return R;
  bool FromPads = From && C % From != 0, ToPads = To && C % To != 0;
  if (From && To && (FromPads || ToPads))
    return reblock(reblock(std::move(R), C, From, 0), C, 0, To);
  if (!From)
    R = padAxis(std::move(R), 4, 1, paddedChannels(C, To) - C);
  R = layoutTransform(std::move(R), layoutOf(From), layoutOf(To));
  if (!To)
    R = padAxis(std::move(R), 4, 1, C - paddedChannels(C, From));
  return R;
}

void ChainRewriter::materialize(const Expr &E) {
  auto It = Vers.find(E.get());
  if (It == Vers.end() || !It->second.Pending)
    return;
  Versions &S = It->second;
  OriginScope Scope(S.Origin);
  Out.push_back(
      {std::static_pointer_cast<const VarNode>(E),
       reblock(S.Blocked.at(S.Home), channels(*tensorTypeOf(E)), S.Home, 0)});
  S.Pending = false;
}

std::string hintOf(const Expr &E, const std::string &Default) {
  const auto *V = E->as<VarNode>();
  return V ? V->nameHint : Default;
}

Expr ChainRewriter::toBlocked(const Expr &X, int64_t Block) {
  Versions &S = Vers[X.get()];
  auto It = S.Blocked.find(Block);
  if (It != S.Blocked.end())
    return It->second;
  std::string Hint = hintOf(X, "x") + fmt::format("_nchw{}c", Block);
  int64_t C = channels(*tensorTypeOf(X));
  Var B;
  if (!S.Blocked.empty() && C % S.Home == 0 && C % Block == 0) {
    // Another block of the same value: convert directly, not via NCHW.
    B = emit(Hint, reblock(S.Blocked.at(S.Home), C, S.Home, Block));
  } else {
    // The first block, or another where one of the two pads: from NCHW
    // (bound first where it is still pending).
    materialize(X);
    B = emit(Hint, reblock(X, C, 0, Block));
    if (S.Blocked.empty())
      S.Home = Block;
  }
  S.Blocked[Block] = B;
  return B;
}

/// Operands the pass converts with a let of their own.
bool isAtom(const Expr &E) {
  return E->kind == ExprKind::Var || E->kind == ExprKind::Constant;
}

Expr ChainRewriter::convert(const Expr &E, const std::string &Src,
                            const std::string &Dst, const std::string &Hint) {
  if (isAtom(E)) {
    materialize(E);
    return emit(hintOf(E, "const") + "_" + Hint, layoutTransform(E, Src, Dst));
  }
  return layoutTransform(plain(E), Src, Dst);
}

std::optional<ConvLayout> ChainRewriter::convChoice(const CallNode &Call) {
  auto It = Choices.find(&Call);
  if (It != Choices.end())
    return It->second;
  std::optional<ConvLayout> L;
  const TensorTypeNode *X =
      Call.args.size() >= 2 ? tensorTypeOf(Call.args[0]) : nullptr;
  const TensorTypeNode *W =
      Call.args.size() >= 2 ? tensorTypeOf(Call.args[1]) : nullptr;
  if (Call.args.size() <= 3 && isNchw(X) && W && W->shape &&
      W->shape->size() == 4 && (*W->shape)[0].isConst()) {
    L = Prefs.preferredConvLayout(Call, *X, *W, blockOf(Call.args[0]));
    // A block that does not divide the channels pads them: a group-1 conv
    // gets zero filters and input channels, a depthwise conv zero groups
    // (with one block for its input and output); other grouped convs stay
    // NCHW.
    int64_t C = channels(*X), M = (*W->shape)[0].value;
    int64_t G = OpAttrs("conv", Call.attrs).getInt("group");
    if (L && (L->inputBlock < 1 || L->outputBlock < 1))
      L.reset();
    bool Pads = L && (C % L->inputBlock != 0 || M % L->outputBlock != 0);
    if (Pads && G != 1 &&
        !(G == C && G == M && L->inputBlock == L->outputBlock))
      L.reset();
  }
  Choices[&Call] = L;
  return L;
}

/// The input block of a blocked conv's weights: the data's, or 1 for a
/// grouped conv (its weights have C / group input channels).
int64_t kernelInputBlock(const CallNode &Call, const ConvLayout &L) {
  return OpAttrs("conv", Call.attrs).getInt("group") == 1 ? L.inputBlock : 1;
}

int64_t ChainRewriter::convBlock(const CallNode &Call) {
  std::optional<ConvLayout> L = convChoice(Call);
  return L ? L->outputBlock : 0;
}

bool isPool(const CallNode &Call) {
  return Call.callee->as<OpNode>()->info->channelwisePool;
}

int64_t ChainRewriter::poolBlock(const CallNode &Call) {
  // Only max_pool has with_indices (a second result, which stays NCHW).
  OpAttrs A(Call.callee->as<OpNode>()->name(), Call.attrs);
  if (Call.args.size() != 1 || !isNchw(tensorTypeOf(Call.args[0])) ||
      (A.has("with_indices") && A.getInt("with_indices") != 0))
    return 0;
  for (const char *Name : {"kernel_shape", "strides", "dilations"})
    if (Call.attrs.has(Name) && Call.attrs.getInts(Name).size() != 2)
      return 0;
  if (Call.attrs.has("pads") && Call.attrs.getInts("pads").size() != 4)
    return 0;
  return blockOf(Call.args[0]);
}

int64_t ChainRewriter::agnosticBlock(const CallNode &Call,
                                     std::vector<Operand> *Roles) {
  const TensorTypeNode *OT = tensorTypeOf(Call);
  if (!isLayoutAgnostic(*Call.callee->as<OpNode>()->info) || !isNchw(OT))
    return 0;
  int64_t C = channels(*OT);
  int64_t Block = 0;
  std::vector<Operand> R;
  for (const Expr &A : Call.args) {
    const TensorTypeNode *T = tensorTypeOf(A);
    if (!T || !T->shape)
      return 0;
    const std::vector<Dim> &S = *T->shape;
    auto PerChannel = [&](size_t At) {
      for (size_t I = 0; I < S.size(); ++I)
        if (!S[I].isConst() || S[I].value != (I == At ? C : 1))
          return false;
      return true;
    };
    if (S == *OT->shape) {
      R.push_back(Operand::Full);
      // The block comes from the first operand that can be computed
      // blocked; without one this op is no reason to change layouts.
      if (!Block)
        Block = blockOf(A);
    } else if (allOnes(S)) {
      R.push_back(Operand::Keep);
    } else if (S.size() == 3 && PerChannel(0)) {
      R.push_back(Operand::Channels3);
    } else if (S.size() == 4 && PerChannel(1)) {
      R.push_back(Operand::Channels4);
    } else {
      return 0;
    }
  }
  if (Block && C % Block != 0 &&
      !keepsZeros(Call,
                  std::find(R.begin(), R.end(), Operand::Keep) != R.end()))
    return 0;
  if (Roles)
    *Roles = std::move(R);
  return Block;
}

int64_t ChainRewriter::blockOf(const Expr &E) {
  if (E->kind == ExprKind::Var) {
    auto It = Vers.find(E.get());
    return It == Vers.end() || It->second.Blocked.empty() ? 0 : It->second.Home;
  }
  const auto *Call = E->as<CallNode>();
  const auto *Op = Call ? Call->callee->as<OpNode>() : nullptr;
  if (!Op)
    return 0;
  if (Op->name() == "conv")
    return convBlock(*Call);
  if (isPool(*Call))
    return poolBlock(*Call);
  return agnosticBlock(*Call, nullptr);
}

Expr ChainRewriter::buildBlocked(const Expr &E, int64_t Block) {
  if (isAtom(E))
    return toBlocked(E, Block);
  int64_t C = channels(*tensorTypeOf(E));
  int64_t Have = blockOf(E);
  if (!Have)
    return reblock(plain(E), C, 0, Block);
  return reblock(buildCall(*E->as<CallNode>()), C, Have, Block);
}

/// Appends the block axis to a 2-d window attribute.
std::vector<int64_t> withBlockAxis(std::vector<int64_t> V, int64_t Value) {
  V.push_back(Value);
  return V;
}

Expr ChainRewriter::buildCall(const CallNode &Call) {
  OriginScope Scope(Call);
  const std::string &Name = Call.callee->as<OpNode>()->name();
  if (Name == "conv") {
    ConvLayout L = *convChoice(Call);
    int64_t KI = kernelInputBlock(Call, L);
    std::string KernelLayout = fmt::format("OIHW{}i{}o", KI, L.outputBlock);
    int64_t C = channels(*tensorTypeOf(Call.args[0]));
    int64_t M = (*tensorTypeOf(Call.args[1])->shape)[0].value;
    int64_t G = OpAttrs("conv", Call.attrs).getInt("group");
    int64_t ExtraIn = paddedChannels(C, L.inputBlock) - C;
    int64_t ExtraOut = paddedChannels(M, L.outputBlock) - M;
    Attrs A;
    for (const auto &[AttrName, Value] : Call.attrs.items())
      if (AttrName != "group" || G != 1)
        A.set(AttrName, Value);
    if (G != 1 && ExtraOut)
      A.set("group", G + ExtraOut); // a padded depthwise conv
    A.set("data_layout", blockedLayout("NCHW", L.inputBlock));
    A.set("kernel_layout", KernelLayout);
    A.set("out_layout", blockedLayout("NCHW", L.outputBlock));
    std::vector<Expr> Args = {buildBlocked(Call.args[0], L.inputBlock)};
    std::string WeightHint = fmt::format("oihw{}i{}o", KI, L.outputBlock);
    if (!ExtraIn && !ExtraOut) {
      Args.push_back(convert(Call.args[1], "OIHW", KernelLayout, WeightHint));
    } else {
      // Zero filters for the padding output channels; a group-1 conv also
      // zero weights for the padding input channels.
      Expr W =
          padAxis(plain(Call.args[1]), 4, 0, ExtraOut, 1, G == 1 ? ExtraIn : 0);
      Args.push_back(emit(hintOf(Call.args[1], "const") + "_" + WeightHint,
                          layoutTransform(std::move(W), "OIHW", KernelLayout)));
    }
    if (Call.args.size() == 3)
      Args.push_back(padAxis(plain(Call.args[2]), 1, 0, ExtraOut));
    return callOp("conv2d_nchwc", std::move(Args), std::move(A));
  }
  if (isPool(Call)) {
    int64_t Block = blockOf(Call.args[0]);
    Expr X = buildBlocked(Call.args[0], Block);
    if (Name == "global_avg_pool" || Name == "global_max_pool")
      return callOp(Name == "global_avg_pool" ? "mean" : "max", {X},
                    Attrs{{"axis", std::vector<int64_t>{2, 3}},
                          {"keepdims", int64_t(1)}});
    // A 2-d pool of NCHWbc is a 3-d pool whose third window axis is the
    // block, with extent 1, step 1 and no padding.
    Attrs A;
    for (const auto &[AttrName, Value] : Call.attrs.items()) {
      if (AttrName == "kernel_shape" || AttrName == "strides" ||
          AttrName == "dilations") {
        A.set(AttrName, withBlockAxis(Call.attrs.getInts(AttrName), 1));
      } else if (AttrName == "pads") {
        std::vector<int64_t> P = Call.attrs.getInts(AttrName);
        A.set(AttrName, std::vector<int64_t>{P[0], P[1], 0, P[2], P[3], 0});
      } else {
        A.set(AttrName, Value);
      }
    }
    return call(Call.callee, {X}, std::move(A));
  }
  std::vector<Operand> Roles;
  int64_t Block = agnosticBlock(Call, &Roles);
  std::vector<Expr> Args;
  for (size_t I = 0; I < Call.args.size(); ++I) {
    const Expr &A = Call.args[I];
    switch (Roles[I]) {
    case Operand::Full:
    case Operand::Channels4: Args.push_back(buildBlocked(A, Block)); break;
    case Operand::Keep: Args.push_back(plain(A)); break;
    case Operand::Channels3: {
      // (C, 1, 1) broadcasts against NCHW; (C/b, 1, 1, b) against NCHWbc.
      int64_t C = channels(*tensorTypeOf(Call));
      if (C % Block == 0) {
        Args.push_back(convert(A, "CHW", blockedLayout("CHW", Block),
                               fmt::format("chw{}c", Block)));
      } else {
        Args.push_back(
            emit(hintOf(A, "const") + fmt::format("_chw{}c", Block),
                 layoutTransform(
                     padAxis(plain(A), 3, 0, paddedChannels(C, Block) - C),
                     "CHW", blockedLayout("CHW", Block))));
      }
      break;
    }
    }
  }
  return call(Call.callee, std::move(Args), Call.attrs);
}

/// An existing conversion from a blocked layout back to NCHW makes its
/// source a blocked version of its result (a second run adds nothing).
void ChainRewriter::noteTransform(const Var &V, const CallNode &Call) {
  if (!Call.args[0]->as<VarNode>() || !Call.attrs.has("src_layout") ||
      !Call.attrs.has("dst_layout") ||
      Call.attrs.getString("dst_layout") != "NCHW")
    return;
  const std::string &Src = Call.attrs.getString("src_layout");
  if (Src.size() < 6 || Src.compare(0, 4, "NCHW") != 0 || Src.back() != 'c')
    return;
  std::string Digits = Src.substr(4, Src.size() - 5);
  if (Digits.empty() || Digits.size() > 6 ||
      Digits.find_first_not_of("0123456789") != std::string::npos)
    return;
  Versions &S = Vers[V.get()];
  S.Home = std::stoll(Digits);
  S.Blocked[S.Home] = std::static_pointer_cast<const VarNode>(Call.args[0]);
}

Expr ChainRewriter::run(const Expr &Chain) {
  std::vector<const LetNode *> Links;
  Expr Body = Chain;
  while (const auto *L = Body->as<LetNode>()) {
    Links.push_back(L);
    Body = L->body;
  }
  for (const LetNode *L : Links) {
    const Var &V = L->var;
    // A value already blocked is no anchor: only calls are rewritten.
    if (L->value->kind == ExprKind::Call) {
      if (int64_t Block = blockOf(L->value)) {
        Expr B = buildCall(*L->value->as<CallNode>());
        Versions &S = Vers[V.get()];
        S.Blocked[Block] = emit(V->nameHint + "_blocked", std::move(B));
        S.Pending = true;
        S.Home = Block;
        S.Origin = originOf(L->value);
        continue;
      }
    }
    // An edge: everything it uses must exist in NCHW.
    OriginScope Scope(originOf(L->value));
    Out.push_back({V, plain(L->value)});
    const auto *Call = L->value->as<CallNode>();
    const auto *Op = Call ? Call->callee->as<OpNode>() : nullptr;
    if (Op && Op->name() == "layout_transform")
      noteTransform(V, *Call);
  }
  Expr Result = plain(Body);
  for (size_t I = Out.size(); I-- > 0;)
    Result = let(Out[I].first, Out[I].second, Result);
  return Result;
}

/// AlterOpLayout: converts the convs the target prefers blocked (NCHW8c...)
/// to conv2d_nchwc and keeps tensors blocked until a consumer needs NCHW.
void alterOpLayout(Module &M, const PassContext &Ctx) {
  std::shared_ptr<const LayoutPreferences> Prefs =
      Ctx.layoutPreferences ? Ctx.layoutPreferences
                            : currentLayoutPreferences();
  if (!Prefs)
    return; // no target preferences: every layout stays as it is
  transformFunctions(
      M, [&](const Expr &Fn) { return AlterLayout(*Prefs).mutate(Fn); });
}

} // namespace

RIVET_REGISTER_PASS("AlterOpLayout", 3,
                    "Converts the convolutions the target prefers blocked "
                    "(NCHW8c, NCHW16c) and keeps their tensors blocked across "
                    "layout-agnostic ops, converting only at the edges.",
                    alterOpLayout);

} // namespace rivet::ir
