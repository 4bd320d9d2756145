//===- LoopIR.h - The loop-level IR of generated kernels --------*- C++ -*-===//
//
// A kernel is a list of buffers (inputs, then outputs; dense row-major, each
// with a dtype and a shape whose extents are expressions), the symbolic size
// parameters those shapes mention, and a body of statements: loop nests with
// annotations, stores, and scalar locals (reduction accumulators).
// Expressions are pure and typed: int64 index arithmetic over loop variables,
// constants and size parameters, and value arithmetic over loads. The LLVM
// backend (CodegenBackend.h) compiles a LoopKernel; the printer shows one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/DType.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

namespace rivet::codegen {

enum class LoopExprKind : uint8_t {
  Const,     // an immediate of any dtype
  Var,       // a loop variable (int64)
  SizeParam, // a symbolic extent, a kernel parameter (int64)
  Load,      // buffer[indices...]
  Local,     // the current value of a scalar local
  Op,        // an operation on operands (LoopOp)
};

/// Operations of Op nodes. Arithmetic is in the node's dtype: integer
/// division and remainder truncate toward zero; Min/Max propagate NaN; the
/// comparisons give bool; Select is (cond, then, else); Cast converts its one
/// operand to the node's dtype (float->int truncates, ->bool is != 0).
enum class LoopOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Min,
  Max,
  Neg,
  Abs,
  Not,
  And,
  Or,
  Xor,
  Shl,
  Shr,
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
  Select,
  Cast,
  IsNan,
  SignBit, // float -> bool: the sign bit is set (-0 and some NaNs too)
  // Math functions (float operands, float result of the same dtype).
  Exp,
  Log,
  Sqrt,
  Tanh,
  Erf,
  Pow,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Floor,
  Ceil,
  Round, // half to even
  Log1p,
  Expm1,
};

/// The spelling of Op in printed kernels ("add", "exp", ...).
const char *loopOpName(LoopOp Op);

class LoopExprNode;
using LoopExpr = std::shared_ptr<const LoopExprNode>;

class LoopExprNode {
public:
  LoopExprKind kind;
  DType dtype;
  LoopOp op = LoopOp::Add;    // Op
  int64_t intValue = 0;       // Const of a bool/integer dtype
  double floatValue = 0;      // Const of a float dtype
  int id = 0;                 // Var, SizeParam, Load (buffer), Local
  std::string name;           // Var, SizeParam: for printing
  std::vector<LoopExpr> args; // Load: indices; Op: operands

  LoopExprNode(LoopExprKind K, DType T) : kind(K), dtype(T) {}
  bool isConst() const { return kind == LoopExprKind::Const; }
};

// Builders. Index arithmetic (int64) folds constants and the identities
// x+0, x*1, x*0, so static shapes give constant-foldable indices.
LoopExpr intConst(int64_t V, DType T = DType::Int64);
LoopExpr floatConst(double V, DType T);
/// A constant of dtype T holding V (converted: bools and integers truncate).
LoopExpr constOf(double V, DType T);
LoopExpr loopVar(int Id, std::string Name);
LoopExpr sizeParam(int Id, std::string Name);
LoopExpr load(int Buffer, DType T, std::vector<LoopExpr> Indices);
LoopExpr localRef(int Local, DType T);
/// An operation whose result dtype is T.
LoopExpr opExpr(LoopOp Op, DType T, std::vector<LoopExpr> Args);
/// Binary arithmetic in the operands' dtype (folds int64 constants).
LoopExpr binary(LoopOp Op, LoopExpr A, LoopExpr B);
LoopExpr unary(LoopOp Op, LoopExpr A);
/// A comparison (bool result).
LoopExpr compare(LoopOp Op, LoopExpr A, LoopExpr B);
LoopExpr select(LoopExpr Cond, LoopExpr Then, LoopExpr Else);
/// A conversion to T (A itself when it already has dtype T).
LoopExpr cast(LoopExpr A, DType T);
/// The smallest value of T (a max's identity): -inf for floats.
LoopExpr lowest(DType T);

// Shorthands of the compute rules.
inline LoopExpr ic(int64_t V) { return intConst(V); }
inline LoopExpr add(LoopExpr A, LoopExpr B) {
  return binary(LoopOp::Add, A, B);
}
inline LoopExpr sub(LoopExpr A, LoopExpr B) {
  return binary(LoopOp::Sub, A, B);
}
inline LoopExpr mul(LoopExpr A, LoopExpr B) {
  return binary(LoopOp::Mul, A, B);
}
inline LoopExpr div(LoopExpr A, LoopExpr B) {
  return binary(LoopOp::Div, A, B);
}
inline LoopExpr imin(LoopExpr A, LoopExpr B) {
  return binary(LoopOp::Min, A, B);
}
inline LoopExpr imax(LoopExpr A, LoopExpr B) {
  return binary(LoopOp::Max, A, B);
}
inline LoopExpr lt(LoopExpr A, LoopExpr B) { return compare(LoopOp::LT, A, B); }
inline LoopExpr gt(LoopExpr A, LoopExpr B) { return compare(LoopOp::GT, A, B); }

/// True when A and B are the same expression (structurally).
bool sameExpr(const LoopExpr &A, const LoopExpr &B);

// Expressions are DAGs: builders and compute rules share subexpressions (a
// fused chain of relus reads its producer twice per op), so a walk that
// recursed into every operand as if the expression were a tree would take
// time exponential in the chain's length. Walkers visit each node once.

/// Calls Visit once on each distinct node reachable from E (by pointer),
/// before its operands; Visit returns whether to walk the node's operands
/// (false: a Load's index arithmetic, say, is skipped). Seen holds the nodes
/// already visited and may be shared across calls, so that a walk over
/// several roots visits a node shared between them once.
void forEachNode(const LoopExpr &E,
                 const std::function<bool(const LoopExprNode &)> &Visit,
                 std::unordered_set<const LoopExprNode *> &Seen);
void forEachNode(const LoopExpr &E,
                 const std::function<bool(const LoopExprNode &)> &Visit);
/// The distinct nodes (by pointer) reachable from Roots.
size_t countNodes(const std::vector<LoopExpr> &Roots);
/// The value of an int64 constant expression.
inline bool isIntConst(const LoopExpr &E, int64_t V) {
  return E->kind == LoopExprKind::Const && E->intValue == V;
}

/// How a loop runs.
enum class LoopKind : uint8_t {
  Serial,
  Parallel,   // iterations are independent and may run on the thread pool
  Vectorized, // the innermost loop: ask the backend to vectorize it
  Unrolled,   // a short loop: ask the backend to unroll it fully
};

enum class LoopStmtKind : uint8_t {
  For,     // for var in [0, extent) kind { body }
  Store,   // buffer[indices] = value
  Declare, // local = value (a new scalar local)
  Assign,  // local = value
};

class LoopStmtNode;
using LoopStmt = std::shared_ptr<const LoopStmtNode>;

class LoopStmtNode {
public:
  LoopStmtKind kind;
  int id = 0; // For: the loop variable; Store: buffer; Declare/Assign: local
  std::string name; // For: the loop variable's name
  LoopExpr extent;  // For
  LoopKind loopKind = LoopKind::Serial;
  std::vector<LoopStmt> body;    // For
  std::vector<LoopExpr> indices; // Store
  LoopExpr value;                // Store, Declare, Assign
  /// Assign: the update is an associative accumulation (a reduction), which
  /// the backend may reorder to vectorize it (float reassociation).
  bool reassociable = false;
  /// Assign of a float max/min accumulation: its operands are never NaN
  /// (lowering tracks NaNs apart) and the sign of a zero result does not
  /// matter, so the backend may tell LLVM (nnan nsz), whose loop vectorizer
  /// only then vectorizes a float max/min reduction.
  bool nanFree = false;
  /// Store: a streaming store (StreamingStores.h): the sole, in-order write
  /// of every element of an output too large for the caches, which the
  /// backend may write around them (non-temporal stores).
  bool streaming = false;

  explicit LoopStmtNode(LoopStmtKind K) : kind(K) {}
};

LoopStmt forLoop(int Var, std::string Name, LoopExpr Extent, LoopKind Kind,
                 std::vector<LoopStmt> Body);
LoopStmt store(int Buffer, std::vector<LoopExpr> Indices, LoopExpr Value);
LoopStmt declareLocal(int Local, LoopExpr Init);
LoopStmt assignLocal(int Local, LoopExpr Value, bool Reassociable,
                     bool NanFree = false);

/// A buffer parameter of a kernel.
struct LoopBuffer {
  std::string name;
  DType dtype;
  std::vector<LoopExpr> shape; // int64 extents (constants or size params)
  bool isOutput = false;
};

/// A compiled unit: void name(void *const *buffers, const int64_t *sizes,
/// const RivetKernelRuntime *runtime) (CodegenBackend.h).
struct LoopKernel {
  std::string name;
  std::vector<LoopBuffer> buffers;     // inputs, then outputs
  std::vector<std::string> sizeParams; // SizeParam ids index this
  std::vector<LoopStmt> body;
  int numLoopVars = 0;
  /// Locals, by id: their dtypes.
  std::vector<DType> locals;
};

/// The fewest scalar operations one chunk of a parallel loop should run: a
/// chunk costs a task on the pool (waking a sleeping thread takes several
/// microseconds, far more on a loaded machine, though the caller never waits
/// for a late one), so 64K operations (~25 us on one core). Lowering marks a
/// loop parallel when its total work may reach two chunks; the backend
/// derives the loop's Grain from it.
constexpr int64_t kParallelChunkWork = 1 << 16;

/// An estimate of the scalar operations of running Body once, as an int64
/// expression over constants and size parameters (a constant when every
/// extent is): a loop multiplies its body's work by its extent; a store,
/// declaration or assignment counts one plus its value's operations and
/// loads, a math function (exp, tanh, ...) counting 8.
LoopExpr loopWork(const std::vector<LoopStmt> &Body);

/// What expressions and statements read and declare: the loop variables
/// and locals they read, the locals they declare, whether a loop is among
/// them. Accumulates over every call.
struct LoopUses {
  std::set<int> vars, locals, declared;
  bool hasLoop = false;
  /// The expression nodes walked so far (each is walked once).
  std::unordered_set<const LoopExprNode *> seen;
  void expr(const LoopExpr &E);
  void stmt(const LoopStmt &S);
  void stmts(const std::vector<LoopStmt> &Ss);
};

/// Human-readable text of a kernel (tests, `rivet dump`). A large
/// subexpression that a statement uses more than once is printed once, as
/// `let tN = ...` before the statement, so that the text stays linear in
/// the expression's (DAG) size.
std::string printLoopKernel(const LoopKernel &K);
std::string printLoopExpr(const LoopExpr &E, const LoopKernel *K = nullptr);

} // namespace rivet::codegen
