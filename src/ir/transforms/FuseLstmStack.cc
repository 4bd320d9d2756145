//===- FuseLstmStack.cc - stacked lstm layers as one lstm_stack call ------===//
//
// lstm(squeeze(lstm(x, ..).0, axes=[1]), ..): forward layers with default
// activations, as exporters write torch's nn.LSTM(num_layers > 1), become
// one lstm_stack call with every layer of the stack. Its kernel runs each
// layer on a thread of its own, a block of steps behind the layer below,
// where the lstm calls ran one after the other. Bindings between two layers
// that read the lower layer's results move after the fused call; a layer
// whose other operands read them stays apart.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "ir/transforms/PatternUtil.h"
#include "kernels/LstmStack.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace rivet::ir {
namespace {

using Binding = std::pair<Var, Expr>;

/// An operand lstm leaves out: a tensor with no elements.
bool absent(const Expr &E) {
  TensorTypeRef T = tensorTypeOf(E);
  return T && T->shape && T->shape->size() == 1 && (*T->shape)[0].isConst() &&
         (*T->shape)[0].value == 0;
}

/// What lstm_stack computes of a layer: forward, sequence first, default
/// activations, no clip, no coupled gates, no sequence lengths or peepholes.
bool stackableLstm(const CallNode &C) {
  if (C.args.size() != 8 || !absent(C.args[4]) || !absent(C.args[7]))
    return false;
  for (const auto &[Name, Value] : C.attrs.items()) {
    if (Name == "hidden_size")
      continue;
    if (Name == "direction" && C.attrs.getString(Name) == "forward")
      continue;
    if ((Name == "layout" || Name == "input_forget") &&
        C.attrs.getInt(Name) == 0)
      continue;
    return false;
  }
  return true;
}

/// A call fusion can extend: a stackable lstm or an lstm_stack. Its input
/// x, its layers' operands (five per layer) and its layer count.
struct Layers {
  Expr x;
  std::vector<Expr> operands;
  int64_t count = 0;
};
/// A stackable lstm call's operands as lstm_stack takes them.
std::vector<Expr> layerOperands(const CallNode &C) {
  std::vector<Expr> Ops;
  for (size_t In : lstm_stack::kLstmInput)
    Ops.push_back(C.args[In]);
  return Ops;
}

std::optional<Layers> layersOf(const Expr &E) {
  const auto *C = E->as<CallNode>();
  const std::string &Op = calledOpName(E);
  if (Op == "lstm" && stackableLstm(*C))
    return Layers{C->args[0], layerOperands(*C), 1};
  if (size_t N = lstm_stack::layers(C ? C->args.size() : 0);
      Op == "lstm_stack" && N)
    return Layers{C->args[0],
                  std::vector<Expr>(C->args.begin() + 1, C->args.end()),
                  (int64_t)N};
  return std::nullopt;
}

/// Replaces each projection t.k of a variable t that now stands for fields
/// of a fused call f (Alias: t -> (f, first field)) by f.(first + k).
class ProjectionRewriter : public pattern::NonPrimitiveMutator {
public:
  explicit ProjectionRewriter(
      const std::unordered_map<const VarNode *, std::pair<Var, int64_t>> &A)
      : Alias(A) {}
  Expr visitTupleGetItem(const TupleGetItemNode &N, const Expr &Self) override {
    if (const auto *V = N.tuple->as<VarNode>())
      if (auto It = Alias.find(V); It != Alias.end())
        return tupleGetItem(It->second.first, It->second.second + N.index);
    return ExprMutator::visitTupleGetItem(N, Self);
  }

private:
  const std::unordered_map<const VarNode *, std::pair<Var, int64_t>> &Alias;
};

/// Fuses the stacks of each let chain it meets.
class StackFuser : public pattern::NonPrimitiveMutator {
public:
  Expr visitLet(const LetNode &N, const Expr &Self) override {
    Expr R = ExprMutator::visitLet(N, Self);
    std::vector<Binding> Chain;
    Expr Body = R;
    while (const auto *L = Body->as<LetNode>()) {
      Chain.emplace_back(L->var, L->value);
      Body = L->body;
    }
    if (!fuseChain(Chain))
      return R;
    Body = substitute(Body);
    for (auto It = Chain.rbegin(); It != Chain.rend(); ++It)
      Body = let(It->first, It->second, Body);
    return Body;
  }

private:
  std::unordered_map<const VarNode *, std::pair<Var, int64_t>> Alias;
  std::unordered_map<const VarNode *, size_t> Pos;

  Expr substitute(const Expr &E) {
    return Alias.empty() ? E : ProjectionRewriter(Alias).mutate(E);
  }

  /// E, or the value of the chain's binding E names.
  Expr resolve(const std::vector<Binding> &Chain, Expr E) const {
    while (const auto *V = E->as<VarNode>()) {
      auto It = Pos.find(V);
      if (It == Pos.end())
        break;
      E = Chain[It->second].second;
    }
    return E;
  }

  void index(const std::vector<Binding> &Chain) {
    Pos.clear();
    for (size_t I = 0; I < Chain.size(); ++I)
      Pos[Chain[I].first.get()] = I;
  }

  /// Rewrites Chain in place; true when it fused anything.
  bool fuseChain(std::vector<Binding> &Chain) {
    Alias.clear();
    index(Chain);
    bool Any = false;
    for (size_t J = 0; J < Chain.size(); ++J) {
      Chain[J].second = substitute(Chain[J].second);
      if (fuseAt(Chain, J)) {
        Any = true;
        index(Chain);
      }
    }
    return Any;
  }

  /// Fuses the layer bound at J with the stack below it, if it has one.
  bool fuseAt(std::vector<Binding> &Chain, size_t &J) {
    const auto *Upper = Chain[J].second->as<CallNode>();
    if (calledOpName(Chain[J].second) != "lstm" || !stackableLstm(*Upper))
      return false;
    // x is squeeze(t.k, axes=[1]) where t is a stack's last layer's Y.
    Expr Sq = resolve(Chain, Upper->args[0]);
    const auto *SqCall = Sq->as<CallNode>();
    if (calledOpName(Sq) != "squeeze" || !SqCall->attrs.has("axes"))
      return false;
    std::vector<int64_t> Axes = SqCall->attrs.getInts("axes");
    if (Axes.size() != 1 || (Axes[0] != 1 && Axes[0] != -3))
      return false;
    Expr Proj = resolve(Chain, SqCall->args[0]);
    const auto *Get = Proj->as<TupleGetItemNode>();
    const auto *Below = Get ? Get->tuple->as<VarNode>() : nullptr;
    auto BelowAt = Below ? Pos.find(Below) : Pos.end();
    if (BelowAt == Pos.end() || BelowAt->second >= J)
      return false;
    const size_t I = BelowAt->second;
    std::optional<Layers> Lower = layersOf(Chain[I].second);
    if (!Lower || Get->index != (int64_t)lstm_stack::kOutputsPerLayer *
                                    (Lower->count - 1))
      return false;
    // The bindings between that read the stack below move after the fused
    // call; the upper layer's own operands must not be among them.
    std::unordered_set<const VarNode *> Reads = {Below};
    std::vector<size_t> Moved;
    for (size_t K = I + 1; K < J; ++K)
      for (const Var &V : freeVars(Chain[K].second))
        if (Reads.count(V.get())) {
          Reads.insert(Chain[K].first.get());
          Moved.push_back(K);
          break;
        }
    for (size_t A = 1; A < Upper->args.size(); ++A)
      for (const Var &V : freeVars(Upper->args[A]))
        if (Reads.count(V.get()))
          return false;

    std::vector<Expr> Args = {Lower->x};
    Args.insert(Args.end(), Lower->operands.begin(), Lower->operands.end());
    for (const Expr &A : layerOperands(*Upper))
      Args.push_back(A);
    Var Stack = var("stack");
    const int64_t Top = (int64_t)lstm_stack::kOutputsPerLayer * Lower->count;
    auto Fields = [&](int64_t From, int64_t N) {
      std::vector<Expr> F;
      for (int64_t K = 0; K < N; ++K)
        F.push_back(tupleGetItem(Stack, From + K));
      return tuple(std::move(F));
    };
    std::vector<Binding> Out;
    std::unordered_set<size_t> Skip(Moved.begin(), Moved.end());
    Skip.insert(I);
    for (size_t K = 0; K < J; ++K)
      if (!Skip.count(K))
        Out.push_back(Chain[K]);
    Out.emplace_back(Stack, callOp("lstm_stack", std::move(Args)));
    Out.emplace_back(Chain[I].first, Fields(0, Top));
    Out.emplace_back(Chain[J].first,
                     Fields(Top, (int64_t)lstm_stack::kOutputsPerLayer));
    size_t Next = Out.size();
    for (size_t K : Moved)
      Out.push_back(Chain[K]);
    Out.insert(Out.end(), std::next(Chain.begin(), (long)J + 1), Chain.end());
    // Earlier aliases of the stack below now name the new call's fields.
    for (auto &[From, To] : Alias)
      if (To.first.get() == Below)
        To = {Stack, To.second};
    Alias[Below] = {Stack, 0};
    Alias[Chain[J].first.get()] = {Stack, Top};
    Chain = std::move(Out);
    // The moved bindings are visited again, to read the fused call.
    J = Next - 1;
    return true;
  }
};

void fuseLstmStackPass(Module &M, const PassContext &) {
  transformFunctions(M, [](const Expr &F) { return StackFuser().mutate(F); });
}

} // namespace

/// FuseLstmStack: lstm layers that feed one another become one lstm_stack
/// call, whose kernel pipelines the layers over threads.
RIVET_REGISTER_PASS("FuseLstmStack", 2,
                    "Turns lstm layers that feed one another into one "
                    "lstm_stack call.",
                    fuseLstmStackPass);

} // namespace rivet::ir
