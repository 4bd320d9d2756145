//===- Interpreter.h - The reference interpreter of the IR ------*- C++ -*-===//
//
// Evaluates any well-typed module directly with the reference kernels: the
// oracle that every compiled result is checked against. Deliberately simple,
// with two guarantees that programs rely on:
//  - calls in tail position (through let bodies, if branches and match
//    right-hand sides) to globals, closures and let-bound recursive functions
//    run in a loop, so a tail-recursive loop of any length uses constant
//    native stack;
//  - deep non-tail recursion fails with rivet::Error, not a crash: "call
//    stack overflow" beyond ExecutionLimits::maxCallDepth nested calls, the
//    VM's limit and error (kernels/ExecutionLimits.h), and "recursion too deep"
//    when the thread's native stack runs low first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "ir/Value.h"
#include "kernels/ExecutionLimits.h"

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace rivet {
struct KernelInfo;
}

namespace rivet::ir {

struct OpInfo;

class Interpreter {
public:
  /// The interpreter keeps its own copy of M (nodes are shared, not cloned).
  explicit Interpreter(const Module &M);
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Calls the global function Fn ("main", without '@') with Args.
  Value call(const std::string &Fn, std::vector<Value> Args);
  /// Evaluates an expression with no free local variables (it may refer to
  /// the module's globals and constructors).
  Value eval(const Expr &E);
  /// Applies a function value (closure or constructor) to Args.
  Value apply(const Value &Fn, std::vector<Value> Args);

  /// Native stack (bytes) kept free below the deepest evaluation frame;
  /// recursion that would go deeper throws. Default 64 KiB.
  void setStackReserve(size_t Bytes) { StackReserve = Bytes; }
  /// Called with every operator call and its result while set (rivet
  /// check --localize records the values by origin); null turns it off.
  using CallObserver = std::function<void(const CallNode &, const Value &)>;
  void setCallObserver(CallObserver O) { Observer = std::move(O); }

  /// The call-depth limit (the same setting as the VM's).
  void setLimits(const ExecutionLimits &L) { Limits = L; }
  const ExecutionLimits &limits() const { return Limits; }

private:
  struct Frame;
  struct Global {
    Expr fn;           // the FunctionNode
    std::string where; // "@name"
    Value closure;     // the global as a function value
  };

  /// Evaluates *E in F; tail positions loop instead of recursing. InFrame:
  /// the evaluation runs a function's body in the frame its caller counted
  /// (else the first call it enters counts as a new frame).
  Value run(const Expr *E, Frame *F, bool InFrame = false);
  Value callOperator(const CallNode &C, const OpInfo &Op,
                     std::vector<Value> Args, const Frame &F);
  Value makeClosure(const Expr &Fn, const Frame &F, const Var &SelfVar);
  const std::vector<const VarNode *> &freeVars(const Expr &Fn);
  /// Builds the frame for calling a function value with Args.
  std::unique_ptr<Frame> enterClosure(const Value &Callee,
                                      std::vector<Value> Args,
                                      const std::string &Where);
  std::unique_ptr<Frame> enterGlobal(const Global &G, std::vector<Value> Args,
                                     const std::string &Where);
  const Global &global(const std::string &Name, const std::string &Where);
  bool matchPattern(const PatternNode &P, const Value &V, Frame &F);
  void checkStack(const Frame &F);
  void initStackBounds();

  Module M;
  std::unordered_map<std::string, Global> Globals;
  std::unordered_map<const FunctionNode *,
                     std::pair<Expr, std::vector<const VarNode *>>>
      FreeVarCache;
  std::unordered_map<const OpInfo *, const KernelInfo *> KernelCache;
  /// Per operator call site: (operator, whether its result is a tuple).
  std::unordered_map<const CallNode *, std::pair<const OpInfo *, bool>>
      TupleCache;
  const char *StackLow = nullptr; // lowest usable address of this thread
  size_t StackReserve = 64 * 1024;
  ExecutionLimits Limits;
  CallObserver Observer;
  size_t CallDepth = 0; // frames of function calls in progress
};

} // namespace rivet::ir
