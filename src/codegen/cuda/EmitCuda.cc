//===- EmitCuda.cc - Loop kernel -> CUDA C++ source -----------------------===//
#include "codegen/cuda/EmitCuda.h"

#include "kernels/Error.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace rivet::codegen::cuda {
namespace {

/// The C type a value of dtype T computes in.
const char *valueType(DType T) {
  switch (T) {
  case DType::Bool: return "bool";
  case DType::Int8: return "signed char";
  case DType::Int16: return "short";
  case DType::Int32: return "int";
  case DType::Int64: return "long long";
  case DType::UInt8: return "unsigned char";
  case DType::UInt16: return "unsigned short";
  case DType::UInt32: return "unsigned int";
  case DType::UInt64: return "unsigned long long";
  case DType::Float32: return "float";
  case DType::Float64: return "double";
  default: fail("cuda codegen: dtype {} has no generated code", dtypeName(T));
  }
}

/// The C type a buffer of dtype T holds (bools as bytes, as the runtime).
const char *memoryType(DType T) {
  return T == DType::Bool ? "unsigned char" : valueType(T);
}

/// The unsigned type of the same width, for wrapping signed arithmetic.
const char *unsignedType(DType T) {
  switch (T) {
  case DType::Int8: return "unsigned char";
  case DType::Int16: return "unsigned short";
  case DType::Int32: return "unsigned int";
  default: return "unsigned long long";
  }
}

bool isSignedInt(DType T) {
  return T == DType::Int8 || T == DType::Int16 || T == DType::Int32 ||
         T == DType::Int64;
}

// Helpers every kernel's source starts with. Max and min propagate the
// first NaN operand, else (a < b ? b : a), as the LLVM emitter's selects.
constexpr const char *kPrelude = R"(
template <typename T> __device__ __forceinline__ T rv_max(T a, T b) {
  return a < b ? b : a;
}
template <typename T> __device__ __forceinline__ T rv_min(T a, T b) {
  return b < a ? b : a;
}
__device__ __forceinline__ float rv_max(float a, float b) {
  return isnan(a) ? a : isnan(b) ? b : (a < b ? b : a);
}
__device__ __forceinline__ double rv_max(double a, double b) {
  return isnan(a) ? a : isnan(b) ? b : (a < b ? b : a);
}
__device__ __forceinline__ float rv_min(float a, float b) {
  return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a);
}
__device__ __forceinline__ double rv_min(double a, double b) {
  return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a);
}
)";

class Emitter {
public:
  explicit Emitter(const LoopKernel &K) : K(K) {}

  /// The leading perfect nest of loops whose iterations are independent:
  /// the body is one loop, each loop's body one loop down to the last, and
  /// every local assigned inside the last is declared there (so no value
  /// flows from one iteration to another). Empty when there is none.
  std::vector<const LoopStmtNode *> outputNest() const {
    std::vector<const LoopStmtNode *> Nest;
    const std::vector<LoopStmt> *Body = &K.body;
    while (Body->size() == 1 && (*Body)[0]->kind == LoopStmtKind::For) {
      Nest.push_back((*Body)[0].get());
      Body = &(*Body)[0]->body;
    }
    std::set<int> Declared, Assigned;
    collectLocals(*Body, Declared, Assigned);
    for (int L : Assigned)
      if (!Declared.count(L))
        return {};
    return Nest;
  }

  std::string run() {
    Out += fmt::format("extern \"C\" __global__ void {}(", K.name);
    std::vector<std::string> Params;
    for (size_t B = 0; B < K.buffers.size(); ++B) {
      const LoopBuffer &Buf = K.buffers[B];
      Params.push_back(fmt::format("{}{}* __restrict__ b{}",
                                   Buf.isOutput ? "" : "const ",
                                   memoryType(Buf.dtype), B));
    }
    for (size_t P = 0; P < K.sizeParams.size(); ++P)
      Params.push_back(fmt::format("const long long s{}", P));
    Out += fmt::format("{}) {{\n", fmt::join(Params, ", "));
    Indent = 1;
    for (size_t L = 0; L < K.locals.size(); ++L)
      line(fmt::format("{} l{}{{}};", valueType(K.locals[L]), L));
    std::vector<const LoopStmtNode *> Nest = outputNest();
    std::optional<std::vector<WarpLoop>> Shared;
    if (!Nest.empty())
      Shared = warpShareable(Nest.back()->body);
    if (Nest.empty()) {
      // Not one independent loop nest: one thread runs it all.
      line("if (blockIdx.x != 0 || threadIdx.x != 0) return;");
      stmts(K.body);
    } else if (Shared) {
      warpRows(Nest, *Shared);
    } else {
      gridStride(Nest);
    }
    Out += "}\n";
    return Out;
  }

private:
  /// A top-level loop of a row's body that the 32 lanes of a warp share,
  /// and the reductions (local, combining operation) its lanes then
  /// combine with shuffles.
  struct WarpLoop {
    const LoopStmtNode *loop = nullptr;
    std::vector<std::pair<int, LoopOp>> reductions;
  };

  static bool shuffleable(DType T) {
    return T == DType::Float32 || T == DType::Float64 || T == DType::Int32 ||
           T == DType::Int64 || T == DType::Bool;
  }

  /// Whether lanes may combine partial results of `l = Op(l, x)` in any
  /// order: exactly for integers, max, min and the logical operations; a
  /// float sum or product only where lowering marked it reassociable.
  static bool combinable(const LoopStmtNode &S) {
    const LoopExpr &V = S.value;
    bool Fp = V->dtype == DType::Float32 || V->dtype == DType::Float64;
    switch (V->op) {
    case LoopOp::Add:
    case LoopOp::Mul: return V->dtype != DType::Bool && (!Fp || S.reassociable);
    case LoopOp::Max:
    case LoopOp::Min: return V->dtype != DType::Bool;
    case LoopOp::Or:
    case LoopOp::And: return V->dtype == DType::Bool;
    default: return false;
    }
  }

  /// How a warp can share a row's body Body: every top-level loop's
  /// iterations are independent but for reductions into locals declared
  /// outside it (`l = op(l, x)`, reassociable, op add, mul, max or min, x
  /// not reading l, l read nowhere else in the loop), and each store in a
  /// loop has the loop's variable in its index (lanes write apart). Nothing
  /// when a loop does not qualify or there is none (one thread per row is
  /// as good then). Lanes run the statements between loops alike.
  std::optional<std::vector<WarpLoop>>
  warpShareable(const std::vector<LoopStmt> &Body) const {
    std::vector<WarpLoop> Loops;
    for (const LoopStmt &S : Body) {
      if (S->kind != LoopStmtKind::For)
        continue;
      WarpLoop W;
      W.loop = S.get();
      if (!shareableLoop(*S, W))
        return std::nullopt;
      Loops.push_back(std::move(W));
    }
    if (Loops.empty())
      return std::nullopt;
    return Loops;
  }

  bool shareableLoop(const LoopStmtNode &L, WarpLoop &W) const {
    std::set<int> Inner, Outer;
    std::set<int> Declared, Assigned;
    collectLocals(L.body, Declared, Assigned);
    std::map<int, LoopOp> Reductions;
    const LoopStmtNode *Bad = nullptr;
    // The assignments to outer locals: each must be a reduction.
    std::function<void(const std::vector<LoopStmt> &)> Scan =
        [&](const std::vector<LoopStmt> &Ss) {
          for (const LoopStmt &S : Ss) {
            if (S->kind == LoopStmtKind::For) {
              Scan(S->body);
            } else if (S->kind == LoopStmtKind::Store) {
              bool HasVar = false;
              for (const LoopExpr &I : S->indices)
                forEachNode(I, [&](const LoopExprNode &N) {
                  HasVar |= N.kind == LoopExprKind::Var && N.id == L.id;
                  return !HasVar;
                });
              if (!HasVar)
                Bad = S.get();
            } else if (S->kind == LoopStmtKind::Assign &&
                       !Declared.count(S->id)) {
              const LoopExpr &V = S->value;
              bool Ok = V->kind == LoopExprKind::Op && V->args.size() == 2 &&
                        shuffleable(V->dtype) && combinable(*S);
              auto IsSelf = [&](const LoopExpr &A) {
                return A->kind == LoopExprKind::Local && A->id == S->id;
              };
              Ok = Ok && (IsSelf(V->args[0]) || IsSelf(V->args[1]));
              auto [It, New] = Reductions.emplace(S->id, V->op);
              if (!Ok || (!New && It->second != V->op))
                Bad = S.get();
            }
          }
        };
    Scan(L.body);
    if (Bad)
      return false;
    // A reduction's local is read only by its own update's self operand.
    bool ReadElsewhere = false;
    std::unordered_set<const LoopExprNode *> Seen;
    auto Check = [&](const LoopExpr &E) {
      forEachNode(
          E,
          [&](const LoopExprNode &N) {
            ReadElsewhere |=
                N.kind == LoopExprKind::Local && Reductions.count(N.id);
            return true;
          },
          Seen);
    };
    std::function<void(const std::vector<LoopStmt> &)> Reads =
        [&](const std::vector<LoopStmt> &Ss) {
          for (const LoopStmt &S : Ss) {
            if (S->kind == LoopStmtKind::For) {
              Check(S->extent);
              Reads(S->body);
              continue;
            }
            for (const LoopExpr &I : S->indices)
              Check(I);
            if (S->kind == LoopStmtKind::Assign && Reductions.count(S->id)) {
              const LoopExpr &V = S->value;
              bool SelfFirst = V->args[0]->kind == LoopExprKind::Local &&
                               V->args[0]->id == S->id;
              Check(V->args[SelfFirst ? 1 : 0]);
            } else {
              Check(S->value);
            }
          }
        };
    Reads(L.body);
    if (ReadElsewhere)
      return false;
    for (const auto &[Local, Op] : Reductions)
      W.reductions.push_back({Local, Op});
    return true;
  }

  /// The rows (the nest's iterations) over the warps of the grid, a warp's
  /// lanes sharing each shareable loop of the row: the reads and writes of
  /// neighbouring lanes are neighbours in memory (one thread per row would
  /// read a row's elements apart), and a row of thousands of elements runs
  /// on 32 lanes, not one.
  void warpRows(const std::vector<const LoopStmtNode *> &Nest,
                const std::vector<WarpLoop> &Shared) {
    std::vector<std::string> Extents = nestTotal(Nest);
    line("const int rv_lane = threadIdx.x & 31;");
    line("const long long rv_step = ((long long)gridDim.x * blockDim.x) >> 5;");
    // Whole warps take rows (blocks are multiples of 32 threads), so every
    // lane of a warp runs the same rows and the shuffles see all 32.
    line("for (long long rv_flat = ((long long)blockIdx.x * blockDim.x + "
         "threadIdx.x) >> 5; rv_flat < rv_total; rv_flat += rv_step) {");
    ++Indent;
    nestIndices(Nest, Extents);
    for (const LoopStmt &S : Nest.back()->body) {
      const WarpLoop *W = nullptr;
      for (const WarpLoop &X : Shared)
        W = X.loop == S.get() ? &X : W;
      if (!W) {
        if (S->kind == LoopStmtKind::Store) {
          // A store outside the shared loops: one lane writes it.
          line("if (rv_lane == 0) {");
          ++Indent;
          stmt(*S);
          --Indent;
          line("}");
        } else {
          stmt(*S);
        }
        continue;
      }
      sharedLoop(*W);
    }
    --Indent;
    line("}");
  }

  /// One shared loop: lane i takes iterations i, i + 32, ...; an add or mul
  /// reduction starts from its identity on every lane but lane 0, which
  /// keeps the value from before the loop; then the lanes' partial values
  /// are combined (a butterfly of shuffles, so every lane has the total),
  /// and the lanes wait for each other's stores before the row goes on.
  void sharedLoop(const WarpLoop &W) {
    const LoopStmtNode &L = *W.loop;
    for (const auto &[Local, Op] : W.reductions) {
      DType T = K.locals[(size_t)Local];
      if (Op == LoopOp::Add || Op == LoopOp::Mul)
        line(fmt::format("if (rv_lane != 0) l{} = ({}){};", Local, valueType(T),
                         Op == LoopOp::Add ? 0 : 1));
    }
    std::string Ext = value(L.extent);
    flushPre();
    line(fmt::format("for (long long v{0} = rv_lane; v{0} < {1}; v{0} += 32) "
                     "{{",
                     L.id, Ext));
    ++Indent;
    stmts(L.body);
    --Indent;
    line("}");
    for (const auto &[Local, Op] : W.reductions) {
      DType T = K.locals[(size_t)Local];
      std::string A = fmt::format("l{}", Local), B = "rv_o";
      std::string Combined;
      bool Fp = T == DType::Float32 || T == DType::Float64;
      const char *U = Fp ? "" : unsignedType(T);
      switch (Op) {
      case LoopOp::Add:
        Combined =
            Fp ? fmt::format("({} + {})", A, B)
               : fmt::format("({})(({}){} + ({}){})", valueType(T), U, A, U, B);
        break;
      case LoopOp::Mul:
        Combined =
            Fp ? fmt::format("({} * {})", A, B)
               : fmt::format("({})(({}){} * ({}){})", valueType(T), U, A, U, B);
        break;
      case LoopOp::Max: Combined = fmt::format("rv_max({}, {})", A, B); break;
      case LoopOp::Min: Combined = fmt::format("rv_min({}, {})", A, B); break;
      case LoopOp::Or: Combined = fmt::format("({} || {})", A, B); break;
      default: Combined = fmt::format("({} && {})", A, B); break;
      }
      line("#pragma unroll");
      line("for (int rv_d = 16; rv_d > 0; rv_d >>= 1) {");
      ++Indent;
      // A bool travels as an int (the shuffles move 32 or 64 bits).
      line(fmt::format("const {} rv_o = {}__shfl_xor_sync(0xffffffffu, {}{}, "
                       "rv_d);",
                       valueType(T), T == DType::Bool ? "0 != " : "",
                       T == DType::Bool ? "(int)" : "", A));
      line(fmt::format("{} = {};", A, Combined));
      --Indent;
      line("}");
    }
    line("__syncwarp();");
  }

  const LoopKernel &K;
  std::string Out;
  int Indent = 0;
  int NextTemp = 0;
  /// Temporaries of the statement being emitted, by node.
  std::unordered_map<const LoopExprNode *, std::string> Memo;
  std::string Pre; // their definitions, emitted before the statement

  void line(const std::string &S) {
    Out += std::string(2 * (size_t)Indent, ' ') + S + "\n";
  }

  static void collectLocals(const std::vector<LoopStmt> &Body,
                            std::set<int> &Declared, std::set<int> &Assigned) {
    for (const LoopStmt &S : Body) {
      if (S->kind == LoopStmtKind::Declare)
        Declared.insert(S->id);
      else if (S->kind == LoopStmtKind::Assign)
        Assigned.insert(S->id);
      else if (S->kind == LoopStmtKind::For)
        collectLocals(S->body, Declared, Assigned);
    }
  }

  /// The nest's iterations, flattened, over the threads of the grid.
  void gridStride(const std::vector<const LoopStmtNode *> &Nest) {
    std::vector<std::string> Extents = nestTotal(Nest);
    line("const long long rv_step = (long long)gridDim.x * blockDim.x;");
    line("for (long long rv_flat = (long long)blockIdx.x * blockDim.x + "
         "threadIdx.x; rv_flat < rv_total; rv_flat += rv_step) {");
    ++Indent;
    nestIndices(Nest, Extents);
    stmts(Nest.back()->body);
    --Indent;
    line("}");
  }

  /// The nest's extents, after declaring rv_total, their product.
  std::vector<std::string>
  nestTotal(const std::vector<const LoopStmtNode *> &Nest) {
    std::vector<std::string> Extents;
    for (const LoopStmtNode *L : Nest)
      Extents.push_back(value(L->extent));
    flushPre();
    line(fmt::format("const long long rv_total = {};",
                     fmt::join(Extents, " * ")));
    return Extents;
  }

  /// The nest's variables from the flat index rv_flat (row-major).
  void nestIndices(const std::vector<const LoopStmtNode *> &Nest,
                   const std::vector<std::string> &Extents) {
    line("long long rv_rest = rv_flat;");
    for (size_t I = Nest.size(); I-- > 0;) {
      if (I == 0) {
        line(fmt::format("const long long v{} = rv_rest;", Nest[I]->id));
      } else {
        line(fmt::format("const long long v{} = rv_rest % ({});", Nest[I]->id,
                         Extents[I]));
        line(fmt::format("rv_rest /= ({});", Extents[I]));
      }
    }
  }

  void stmts(const std::vector<LoopStmt> &Ss) {
    for (const LoopStmt &S : Ss)
      stmt(*S);
  }

  void stmt(const LoopStmtNode &S) {
    switch (S.kind) {
    case LoopStmtKind::For: {
      std::string Ext = value(S.extent);
      flushPre();
      if (S.loopKind == LoopKind::Unrolled)
        line("#pragma unroll");
      line(fmt::format("for (long long v{0} = 0; v{0} < {1}; ++v{0}) {{", S.id,
                       Ext));
      ++Indent;
      stmts(S.body);
      --Indent;
      line("}");
      return;
    }
    case LoopStmtKind::Store: {
      const LoopBuffer &Buf = K.buffers.at((size_t)S.id);
      std::string At = offset(Buf, S.indices);
      std::string V = value(S.value);
      flushPre();
      line(fmt::format("b{}[{}] = ({})({});", S.id, At, memoryType(Buf.dtype),
                       V));
      return;
    }
    case LoopStmtKind::Declare:
    case LoopStmtKind::Assign: {
      std::string V = value(S.value);
      flushPre();
      line(fmt::format("l{} = {};", S.id, V));
      return;
    }
    }
  }

  void flushPre() {
    if (!Pre.empty())
      Out += Pre;
    Pre.clear();
    Memo.clear();
  }

  /// The row-major offset of Indices in Buf.
  std::string offset(const LoopBuffer &Buf,
                     const std::vector<LoopExpr> &Indices) {
    if (Indices.empty())
      return "0";
    std::string At = value(Indices[0]);
    for (size_t I = 1; I < Indices.size(); ++I)
      At = fmt::format("({}) * ({}) + {}", At, value(Buf.shape[I]),
                       value(Indices[I]));
    return At;
  }

  /// E as a C expression; operations become temporaries of the statement
  /// (each node once: expressions are DAGs).
  std::string value(const LoopExpr &E) {
    switch (E->kind) {
    case LoopExprKind::Const: return constant(*E);
    case LoopExprKind::Var: return fmt::format("v{}", E->id);
    case LoopExprKind::SizeParam: return fmt::format("s{}", E->id);
    case LoopExprKind::Local: return fmt::format("l{}", E->id);
    case LoopExprKind::Load:
    case LoopExprKind::Op: break;
    }
    auto It = Memo.find(E.get());
    if (It != Memo.end())
      return It->second;
    std::string Text;
    if (E->kind == LoopExprKind::Load) {
      const LoopBuffer &Buf = K.buffers.at((size_t)E->id);
      Text = fmt::format("b{}[{}]", E->id, offset(Buf, E->args));
      if (E->dtype == DType::Bool)
        Text = fmt::format("({} != 0)", Text);
    } else {
      Text = operation(*E);
    }
    std::string Name = fmt::format("t{}", NextTemp++);
    Pre += std::string(2 * (size_t)Indent, ' ') +
           fmt::format("const {} {} = {};\n", valueType(E->dtype), Name, Text);
    Memo.emplace(E.get(), Name);
    return Name;
  }

  static std::string constant(const LoopExprNode &E) {
    if (E.dtype == DType::Bool)
      return E.intValue ? "true" : "false";
    if (E.dtype == DType::Float32) {
      float F = (float)E.floatValue;
      uint32_t Bits;
      std::memcpy(&Bits, &F, 4);
      return fmt::format("__int_as_float({:#x})", Bits);
    }
    if (E.dtype == DType::Float64) {
      uint64_t Bits;
      std::memcpy(&Bits, &E.floatValue, 8);
      return fmt::format("__longlong_as_double({:#x}LL)", Bits);
    }
    // The bit pattern, converted (wraps for signed types, as constants do).
    return fmt::format("(({}){:#x}ULL)", valueType(E.dtype),
                       (uint64_t)E.intValue);
  }

  std::string operation(const LoopExprNode &E) {
    std::vector<std::string> A;
    for (const LoopExpr &X : E.args)
      A.push_back(value(X));
    DType T = E.args.empty() ? E.dtype : E.args[0]->dtype;
    bool Fp = T == DType::Float32 || T == DType::Float64;
    bool F32 = T == DType::Float32;
    const char *R = valueType(E.dtype);
    auto Wrap = [&](const char *Op) {
      if (!isSignedInt(T))
        return fmt::format("({} {} {})", A[0], Op, A[1]);
      const char *U = unsignedType(T);
      return fmt::format("({})(({}){} {} ({}){})", R, U, A[0], Op, U, A[1]);
    };
    auto Math = [&](const char *Name) {
      std::vector<std::string> Args = A;
      return fmt::format("{}{}({})", Name, F32 ? "f" : "",
                         fmt::join(Args, ", "));
    };
    switch (E.op) {
    case LoopOp::Add:
      return Fp ? fmt::format("({} + {})", A[0], A[1]) : Wrap("+");
    case LoopOp::Sub:
      return Fp ? fmt::format("({} - {})", A[0], A[1]) : Wrap("-");
    case LoopOp::Mul:
      return Fp ? fmt::format("({} * {})", A[0], A[1]) : Wrap("*");
    case LoopOp::Div: return fmt::format("({} / {})", A[0], A[1]);
    case LoopOp::Rem:
      return Fp ? Math("fmod") : fmt::format("({} % {})", A[0], A[1]);
    case LoopOp::Min: return fmt::format("rv_min({}, {})", A[0], A[1]);
    case LoopOp::Max: return fmt::format("rv_max({}, {})", A[0], A[1]);
    case LoopOp::Neg:
      return isSignedInt(T)
                 ? fmt::format("({})(0 - ({}){})", R, unsignedType(T), A[0])
                 : fmt::format("(-{})", A[0]);
    case LoopOp::Abs:
      if (Fp)
        return Math("fabs");
      return isSignedInt(T)
                 ? fmt::format("({0} < 0 ? ({1})(0 - ({2}){0}) : {0})", A[0], R,
                               unsignedType(T))
                 : A[0];
    case LoopOp::Not:
      return T == DType::Bool ? fmt::format("(!{})", A[0])
                              : fmt::format("({})(~{})", R, A[0]);
    case LoopOp::And: return fmt::format("({})({} & {})", R, A[0], A[1]);
    case LoopOp::Or: return fmt::format("({})({} | {})", R, A[0], A[1]);
    case LoopOp::Xor: return fmt::format("({})({} ^ {})", R, A[0], A[1]);
    case LoopOp::Shl: return fmt::format("({})({} << {})", R, A[0], A[1]);
    case LoopOp::Shr: return fmt::format("({})({} >> {})", R, A[0], A[1]);
    case LoopOp::EQ: return fmt::format("({} == {})", A[0], A[1]);
    case LoopOp::NE: return fmt::format("({} != {})", A[0], A[1]);
    case LoopOp::LT: return fmt::format("({} < {})", A[0], A[1]);
    case LoopOp::LE: return fmt::format("({} <= {})", A[0], A[1]);
    case LoopOp::GT: return fmt::format("({} > {})", A[0], A[1]);
    case LoopOp::GE: return fmt::format("({} >= {})", A[0], A[1]);
    case LoopOp::Select: return fmt::format("({} ? {} : {})", A[0], A[1], A[2]);
    case LoopOp::Cast:
      return E.dtype == DType::Bool ? fmt::format("({} != 0)", A[0])
                                    : fmt::format("({})({})", R, A[0]);
    case LoopOp::IsNan: return fmt::format("isnan({})", A[0]);
    case LoopOp::SignBit: return fmt::format("(signbit({}) != 0)", A[0]);
    case LoopOp::Exp: return Math("exp");
    case LoopOp::Log: return Math("log");
    case LoopOp::Sqrt: return Math("sqrt");
    case LoopOp::Tanh: return Math("tanh");
    case LoopOp::Erf: return Math("erf");
    case LoopOp::Pow: return Math("pow");
    case LoopOp::Sin: return Math("sin");
    case LoopOp::Cos: return Math("cos");
    case LoopOp::Tan: return Math("tan");
    case LoopOp::Asin: return Math("asin");
    case LoopOp::Acos: return Math("acos");
    case LoopOp::Atan: return Math("atan");
    case LoopOp::Sinh: return Math("sinh");
    case LoopOp::Cosh: return Math("cosh");
    case LoopOp::Asinh: return Math("asinh");
    case LoopOp::Acosh: return Math("acosh");
    case LoopOp::Atanh: return Math("atanh");
    case LoopOp::Floor: return Math("floor");
    case LoopOp::Ceil: return Math("ceil");
    case LoopOp::Round: return Math("rint"); // half to even
    case LoopOp::Log1p: return Math("log1p");
    case LoopOp::Expm1: return Math("expm1");
    }
    fail("cuda codegen: operation {} has no CUDA form", loopOpName(E.op));
  }
};

} // namespace

bool runsInParallel(const LoopKernel &K) {
  return !Emitter(K).outputNest().empty();
}

std::string emitCudaSource(const std::vector<LoopKernel> &Ks) {
  std::string Src = kPrelude;
  for (const LoopKernel &K : Ks)
    Src += "\n" + Emitter(K).run();
  return Src;
}

} // namespace rivet::codegen::cuda
