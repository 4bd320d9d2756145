//===- WinogradConv.cc - 3x3 convolutions by minimal filtering ------------===//
//
// F(m x m, 3 x 3) over blocked tensors X [N, C/b, H, W, b], W [M/o, C/b, 3,
// 3, b, o] and Out [N, M/o, Ho, Wo, o]. With alpha = m + 2 the output is cut
// into m x m tiles; each reads an alpha x alpha input patch d_c per input
// channel c and is
//     Y = A^T [ sum_c (G g_c G^T) .* (B^T d_c B) ] A.
// For each of the alpha^2 positions xi the sum over c is a matrix product,
// so the conv runs as
//   1. input transform  V[xi][tile][c] = (B^T d_c B)[xi], eight channels of
//      the block per vector operation;
//   2. batched oneDNN matmuls Z[xi] = V[xi] @ U[xi], the positions split
//      between threads, with the weight transform U[xi][c][m] =
//      (G g G^T)[xi] cached per constant weight buffer;
//   3. output transform A^T Z A, then bias and post-ops, cropped at the
//      output's edges.
// The matrices are Lavin & Gray's (points 0, +-1, +-2 for m = 4).
//
//===----------------------------------------------------------------------===//
#include "kernels/dnnl/WinogradConv.h"

#include "kernels/DnnlConfig.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/dnnl/DnnlContext.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rivet {

using namespace dnnlctx;
using dnnl::memory;

namespace {

std::atomic<int64_t> Calls{0};

std::atomic<WinogradProducts> ProductsFlag{WinogradProducts::Auto};
/// Bytes of V or Z per chunk of tile rows (resnet18 at batch 1: 1.8 MB).
std::atomic<int64_t> ScratchLimit{int64_t(16) << 20};

std::atomic<WinogradChoice> &winogradChoiceFlag() {
  static std::atomic<WinogradChoice> C{[] {
    const char *E = std::getenv("RIVET_WINOGRAD");
    std::string_view S = E ? E : "";
    if (S == "off" || S == "0")
      return WinogradChoice::Off;
    if (S == "2")
      return WinogradChoice::Tile2;
    if (S == "4")
      return WinogradChoice::Tile4;
    return WinogradChoice::Auto;
  }()};
  return C;
}

/// Kind tag of the batched matmul's PrimitiveKey and of the cached
/// transformed weights' form.
constexpr int64_t kWinogradTag = 0x77696e6f; // "wino"

// The code below runs only where the CPU has AVX2 and FMA (checked before
// the first call), so that eight lanes are one register; the build's
// baseline is SSE2.
#pragma GCC push_options
#pragma GCC target("avx2,fma")

/// Eight float lanes: the transforms work on eight channels of a block at
/// once.
typedef float Lanes __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

inline Lanes loadTile(const float *P) {
  Lanes V;
  std::memcpy(&V, P, sizeof(V));
  return V;
}
inline void store(float *P, Lanes V) { std::memcpy(P, &V, sizeof(V)); }
inline Lanes splat(float F) { return Lanes{F, F, F, F, F, F, F, F}; }
/// P[0], P[Stride], ..., P[7 * Stride].
inline Lanes gatherTile(const float *P, int64_t Stride) {
  return Lanes{P[0],          P[Stride],     P[2 * Stride], P[3 * Stride],
               P[4 * Stride], P[5 * Stride], P[6 * Stride], P[7 * Stride]};
}

/// F(2 x 2, 3 x 3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
/// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1].
/// Each member applies its matrix to one column (the 2-D transforms apply
/// it to the columns, then to the rows).
struct Tile2 {
  static constexpr int M = 2, Alpha = 4;
  static void input(const Lanes *D, Lanes *R) { // R = B^T D
    R[0] = D[0] - D[2];
    R[1] = D[1] + D[2];
    R[2] = D[2] - D[1];
    R[3] = D[1] - D[3];
  }
  static void output(const Lanes *Z, Lanes *R) { // R = A^T Z
    R[0] = Z[0] + Z[1] + Z[2];
    R[1] = Z[1] - Z[2] - Z[3];
  }
  template <class T> static void weight(const T *G3, T *R) { // R = G g
    R[0] = G3[0];
    R[1] = (G3[0] + G3[1] + G3[2]) * 0.5;
    R[2] = (G3[0] - G3[1] + G3[2]) * 0.5;
    R[3] = G3[2];
  }
};

/// F(4 x 4, 3 x 3): B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
/// 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1], G = [1/4 0 0;
/// -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1],
/// A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
struct Tile4 {
  static constexpr int M = 4, Alpha = 6;
  static void input(const Lanes *D, Lanes *R) {
    Lanes A = D[4] - 4.f * D[2], B = D[3] - 4.f * D[1];
    Lanes C = D[4] - D[2], E = 2.f * (D[3] - D[1]);
    R[0] = 4.f * D[0] - 5.f * D[2] + D[4];
    R[1] = A + B;
    R[2] = A - B;
    R[3] = C + E;
    R[4] = C - E;
    R[5] = 4.f * D[1] - 5.f * D[3] + D[5];
  }
  static void output(const Lanes *Z, Lanes *R) {
    Lanes P12 = Z[1] + Z[2], M12 = Z[1] - Z[2];
    Lanes P34 = Z[3] + Z[4], M34 = Z[3] - Z[4];
    R[0] = Z[0] + P12 + P34;
    R[1] = M12 + 2.f * M34;
    R[2] = P12 + 4.f * P34;
    R[3] = M12 + 8.f * M34 + Z[5];
  }
  template <class T> static void weight(const T *G3, T *R) {
    constexpr double Sixth = 1.0 / 6, Twelfth = 1.0 / 12, Th = 1.0 / 24;
    R[0] = G3[0] * 0.25;
    R[1] = (G3[0] + G3[1] + G3[2]) * -Sixth;
    R[2] = (G3[0] - G3[1] + G3[2]) * -Sixth;
    R[3] = G3[0] * Th + G3[1] * Twelfth + G3[2] * Sixth;
    R[4] = G3[0] * Th - G3[1] * Twelfth + G3[2] * Sixth;
    R[5] = G3[2];
  }
};

/// The conv's extents; tiles count m x m output tiles over all images.
struct Geometry {
  int64_t N, C, M, H, W, Ho, Wo, padTop, padLeft;
  int64_t dataBlock, outBlock;
  int64_t tilesH, tilesW, tiles;
};

/// The bias and post-ops, applied to eight channels of one output pixel.
struct Tail {
  using Form = OperandForm;
  struct Op {
    PostOp::Kind kind;
    float lo, hi;
    const float *data; // binary operand
    Form form;
  };
  const float *bias = nullptr;
  std::vector<Op> ops;

  /// Applies the tail to V[0..Count): channels Channel.. of consecutive
  /// output pixels, the first at Offset in Out's blocked order and each
  /// Stride floats after the one before. One tile row at a time, so that
  /// the switch over the ops is not paid per vector.
  void apply(Lanes *V, int64_t Count, int64_t Channel, int64_t Offset,
             int64_t Stride) const {
    if (bias) {
      Lanes B = loadTile(bias + Channel);
      for (int64_t I = 0; I < Count; ++I)
        V[I] += B;
    }
    for (const Op &O : ops) {
      switch (O.kind) {
      case PostOp::Kind::Relu: {
        Lanes Z = {};
        for (int64_t I = 0; I < Count; ++I) // NaN stays, as in std::max(x, 0)
          V[I] = V[I] < Z ? Z : V[I];
        break;
      }
      case PostOp::Kind::Clip: {
        Lanes Lo = splat(O.lo), Hi = splat(O.hi);
        for (int64_t I = 0; I < Count; ++I) {
          V[I] = V[I] < Lo ? Lo : V[I];
          V[I] = V[I] > Hi ? Hi : V[I];
        }
        break;
      }
      case PostOp::Kind::Sigmoid:
        for (int64_t I = 0; I < Count; ++I)
          for (int64_t L = 0; L < kLanes; ++L)
            V[I][L] = 1.f / (1.f + std::exp(-V[I][L]));
        break;
      case PostOp::Kind::Tanh:
        for (int64_t I = 0; I < Count; ++I)
          for (int64_t L = 0; L < kLanes; ++L)
            V[I][L] = std::tanh(V[I][L]);
        break;
      case PostOp::Kind::Add:
      case PostOp::Kind::Multiply: {
        bool Add = O.kind == PostOp::Kind::Add;
        for (int64_t I = 0; I < Count; ++I) {
          Lanes X = O.form == Form::Scalar ? splat(*O.data)
                    : O.form == Form::PerChannel
                        ? loadTile(O.data + Channel)
                        : loadTile(O.data + Offset + I * Stride);
          V[I] = Add ? V[I] + X : V[I] * X;
        }
        break;
      }
      }
    }
  }
};

/// The tail for Post, or nullopt when an operand broadcasts in a way the
/// output transform does not read (then the direct kernel runs).
std::optional<Tail> makeTail(const Tensor *B, const PostOps &Post,
                             const Tensor &Out, int64_t M) {
  Tail T;
  if (B)
    T.bias = B->data<float>();
  for (const PostOp &P : Post) {
    Tail::Op O{P.kind, (float)P.lo, (float)P.hi, nullptr, Tail::Form::Scalar};
    if (P.isBinary()) {
      std::optional<OperandForm> F =
          blockedOperandForm(P.operand, M, Out.shape());
      if (!F)
        return std::nullopt;
      O.form = *F;
      O.data = P.operand.data<float>();
    }
    T.ops.push_back(O);
  }
  return T;
}

/// Four doubles: the weight transform works on four output channels at once.
typedef double Doubles __attribute__((vector_size(32)));

/// U[xi][c][m] = (G g G^T)[xi] for W [M/o, C/b, 3, 3, b, o], in double;
/// U[xi][m][c] when Transposed. Once per constant weight buffer, but on the
/// first call's path (resnet18: 22M transformed values).
template <class F>
void transformWeights(const Geometry &G, const float *W, bool Transposed,
                      float *U) {
  constexpr int A = F::Alpha;
  const int64_t Ib = G.dataBlock, Ob = G.outBlock, Cb = G.C / Ib;
  const int64_t Plane = G.C * G.M;
  auto Transform = [&](int64_t C, int64_t M) {
    const float *Gk =
        W + ((M / Ob) * Cb + C / Ib) * 9 * Ib * Ob + (C % Ib) * Ob + M % Ob;
    Doubles T[A][3];
    for (int Kw = 0; Kw < 3; ++Kw) {
      Doubles Col[3], R[A];
      for (int Kh = 0; Kh < 3; ++Kh) {
        const float *P = Gk + (Kh * 3 + Kw) * Ib * Ob;
        Col[Kh] = Doubles{P[0], P[1], P[2], P[3]};
      }
      F::weight(Col, R);
      for (int I = 0; I < A; ++I)
        T[I][Kw] = R[I];
    }
    for (int I = 0; I < A; ++I) {
      Doubles R[A];
      F::weight(T[I], R);
      for (int J = 0; J < A; ++J)
        for (int L = 0; L < 4; ++L)
          U[(I * A + J) * Plane +
            (Transposed ? (M + L) * G.C + C : C * G.M + M + L)] =
              (float)R[J][L];
    }
  };
  // In the order U is stored, so that its planes are written sequentially.
  // Ob, and so M, is a multiple of 4.
  if (Transposed) {
    for (int64_t M = 0; M < G.M; M += 4)
      for (int64_t C = 0; C < G.C; ++C)
        Transform(C, M);
  } else {
    for (int64_t C = 0; C < G.C; ++C)
      for (int64_t M = 0; M < G.M; M += 4)
        Transform(C, M);
  }
}

/// V and Z for a set of tiles: a plane per position of Tiles x C (V) and
/// Tiles x M (Z) floats, VPlane and ZPlane floats apart. ChannelMajor: the
/// products are Z^T = U^T V^T, with U stored [xi][m][c] and Z [xi][m][t].
/// With few tiles oneDNN's gemm does that form faster: it packs the
/// operand with few rows, not all of U per position (resnet18's 512-channel
/// 7x7 products: 15 GMAC/s as V @ U, 24 as U^T V^T).
struct TileScratch {
  float *v = nullptr, *z = nullptr;
  int64_t tiles = 0, vPlane = 0, zPlane = 0;
  bool channelMajor = false;
};

// Both transforms walk one row of tiles at a time, channels outside and the
// row's tiles inside: the image's rows are then read (or written) as a few
// sequential streams, and the row's slice of V or Z (alpha^2 x tilesW x C
// floats) stays in L2 across the channels. Tile-major order, which touched
// every channel block's plane per tile, took 1.7x as long (resnet18's
// 64-channel conv, hot caches: 2.2 ms, 1.3 in this order). The channels go
// sixteen at a time (two groups of eight lanes), so that each position's plane
// gets whole 64-byte lines per tile.
constexpr int64_t kLineGroups = 2;

/// S.v[xi][t][c] = (B^T d B)[xi] for the tiles of tile rows [Begin, End)
/// (a tile row is one image's tiles at one height); S holds the tiles of
/// rows First...
template <class F>
void transformInput(const Geometry &G, const float *X, const TileScratch &S,
                    int64_t First, int64_t Begin, int64_t End) {
  const int64_t Plane = S.vPlane;
  constexpr int A = F::Alpha;
  const int64_t Db = G.dataBlock, Cb = G.C / Db, Groups = G.C / kLanes;
  for (int64_t Row = Begin; Row < End; ++Row) {
    int64_t N = Row / G.tilesH, Y0 = Row % G.tilesH * F::M - G.padTop;
    for (int64_t G0 = 0; G0 < Groups; G0 += kLineGroups)
      for (int64_t Tx = 0; Tx < G.tilesW; ++Tx) {
        int64_t X0 = Tx * F::M - G.padLeft;
        bool Inside = Y0 >= 0 && X0 >= 0 && Y0 + A <= G.H && X0 + A <= G.W;
        float *Vt = S.v + ((Row - First) * G.tilesW + Tx) * G.C;
        for (int64_t Gi = G0; Gi < std::min(Groups, G0 + kLineGroups); ++Gi) {
          int64_t C0 = Gi * kLanes, Q = C0 % Db;
          const float *Xc = X + (N * Cb + C0 / Db) * G.H * G.W * Db;
          Lanes D[A][A];
#pragma GCC unroll 6
          for (int I = 0; I < A; ++I)
#pragma GCC unroll 6
            for (int J = 0; J < A; ++J) {
              int64_t Y = Y0 + I, Xx = X0 + J;
              D[I][J] = Inside || (Y >= 0 && Y < G.H && Xx >= 0 && Xx < G.W)
                            ? loadTile(Xc + (Y * G.W + Xx) * Db + Q)
                            : Lanes{};
            }
          Lanes Tmp[A][A];
#pragma GCC unroll 6
          for (int J = 0; J < A; ++J) {
            Lanes Col[A], R[A];
#pragma GCC unroll 6
            for (int I = 0; I < A; ++I)
              Col[I] = D[I][J];
            F::input(Col, R);
#pragma GCC unroll 6
            for (int I = 0; I < A; ++I)
              Tmp[I][J] = R[I];
          }
#pragma GCC unroll 6
          for (int I = 0; I < A; ++I) {
            Lanes R[A];
            F::input(Tmp[I], R);
#pragma GCC unroll 6
            for (int J = 0; J < A; ++J)
              store(Vt + (I * A + J) * Plane + C0, R[J]);
          }
        }
      }
  }
}

/// Out = tail(A^T Z A) for the tiles of tile rows [Begin, End), cropped at
/// the output's edges; Z is laid out like transformInput's V, or as
/// Z[xi][m][t] when ChannelMajor (see TileScratch).
template <class F, bool ChannelMajor>
void transformOutput(const Geometry &G, const TileScratch &S, const Tail &Tl,
                     float *Out, int64_t First, int64_t Begin, int64_t End) {
  constexpr int A = F::Alpha, Mt = F::M;
  const int64_t Ob = G.outBlock, Mb = G.M / Ob, Groups = G.M / kLanes;
  const int64_t Plane = S.zPlane;
  for (int64_t Row = Begin; Row < End; ++Row) {
    int64_t N = Row / G.tilesH, Y0 = Row % G.tilesH * Mt;
    int64_t Rows = std::min<int64_t>(Mt, G.Ho - Y0);
    for (int64_t G0 = 0; G0 < Groups; G0 += kLineGroups)
      for (int64_t Tx = 0; Tx < G.tilesW; ++Tx) {
        int64_t X0 = Tx * Mt, Cols = std::min<int64_t>(Mt, G.Wo - X0);
        for (int64_t Gi = G0; Gi < std::min(Groups, G0 + kLineGroups); ++Gi) {
          int64_t Channel = Gi * kLanes, Mbi = Channel / Ob, Q = Channel % Ob;
          int64_t Tile = (Row - First) * G.tilesW + Tx;
          const float *Zt = ChannelMajor ? S.z + Channel * S.tiles + Tile
                                         : S.z + Tile * G.M + Channel;
          Lanes AtZ[Mt][A]; // A^T Z, by columns
#pragma GCC unroll 6
          for (int J = 0; J < A; ++J) {
            Lanes Col[A], R[Mt];
#pragma GCC unroll 6
            for (int I = 0; I < A; ++I)
              Col[I] = ChannelMajor
                           ? gatherTile(Zt + (I * A + J) * Plane, S.tiles)
                           : loadTile(Zt + (I * A + J) * Plane);
            F::output(Col, R);
#pragma GCC unroll 6
            for (int I = 0; I < Mt; ++I)
              AtZ[I][J] = R[I];
          }
          for (int64_t I = 0; I < Rows; ++I) {
            Lanes R[Mt];
            F::output(AtZ[I], R);
            int64_t Offset =
                ((N * Mb + Mbi) * G.Ho * G.Wo + (Y0 + I) * G.Wo + X0) * Ob + Q;
            Tl.apply(R, Cols, Channel, Offset, Ob);
            for (int64_t J = 0; J < Cols; ++J)
              store(Out + Offset + J * Ob, R[J]);
          }
        }
      }
  }
}

/// Runs Fn(Begin, End) over [0, N) on the runtime's pool, chunks of at
/// least Grain.
template <class Fn> void parallelTiles(int64_t N, int64_t Grain, Fn &&Body) {
  kernelRuntime().parallelFor(N, Grain, &Body,
                              [](void *Closure, int64_t Begin, int64_t End) {
                                (*static_cast<Fn *>(Closure))(Begin, End);
                              });
}

/// Floats from one position's plane to the next for planes of Tiles x
/// Width floats: whole cache lines, an odd number of them. Planes a
/// multiple of 16 lines apart (C = 64, 196 tiles: 784 lines) put a tile's
/// 36 values, which the transforms touch together, in four of L1's 64
/// sets (8 ways each).
int64_t planeStride(int64_t Tiles, int64_t Width) {
  constexpr int64_t Line = 64 / sizeof(float);
  int64_t Lines = (Tiles * Width + Line - 1) / Line;
  return (Lines | 1) * Line;
}

/// This thread's scratch for Tiles tiles of A2 positions; slots 0 and 1.
TileScratch tileScratch(int64_t A2, int64_t Tiles, int64_t C, int64_t M,
                        bool ChannelMajor) {
  TileScratch S;
  S.tiles = Tiles;
  S.channelMajor = ChannelMajor;
  S.vPlane = planeStride(Tiles, C);
  S.zPlane = planeStride(Tiles, M);
  S.v = static_cast<float *>(
      threadScratch(plainDesc({A2 * S.vPlane}), 0).get_data_handle());
  S.z = static_cast<float *>(
      threadScratch(plainDesc({A2 * S.zPlane}), 1).get_data_handle());
  return S;
}

/// The batched matmul Z[xi] = V[xi] @ U[xi] over Batch positions, each
/// [Tiles x C] @ [C x M], run on the calling thread alone.
std::shared_ptr<const CachedPrimitive>
batchedMatMul(int64_t Batch, const TileScratch &S, int64_t C, int64_t M) {
  thread_local PrimitiveKey Key;
  Key.clear();
  Key.add(kWinogradTag);
  for (int64_t D :
       {Batch, S.tiles, C, M, S.vPlane, S.zPlane, (int64_t)S.channelMajor})
    Key.add(D);
  return findPrimitive(Key, [&] {
    CachedPrimitive P;
    try {
      if (S.channelMajor) { // U^T [M x C] @ V^T (a view of V) [C x T]
        P.src = plainDesc({Batch, M, C});
        P.weights = stridedDesc({Batch, C, S.tiles}, {S.vPlane, 1, C});
        P.dst = stridedDesc({Batch, M, S.tiles}, {S.zPlane, S.tiles, 1});
      } else {
        P.src = stridedDesc({Batch, S.tiles, C}, {S.vPlane, C, 1});
        P.weights = plainDesc({Batch, C, M});
        P.dst = stridedDesc({Batch, S.tiles, M}, {S.zPlane, M, 1});
      }
      dnnl::matmul::desc D(P.src, P.weights, P.dst);
      dnnl::matmul::primitive_desc PD(D, baseAttr(), engine());
      P.prim = dnnl::matmul(PD);
      P.scratchpad = PD.scratchpad_desc();
    } catch (const dnnl::error &) {
      P = CachedPrimitive{};
    }
    return P;
  });
}

/// Z[xi] = V[xi] @ U[xi] for positions [Begin, End) on this thread. False
/// when oneDNN fails.
bool multiplyPositions(const TileScratch &S, const float *U, int64_t Begin,
                       int64_t End, int64_t C, int64_t M) {
  try {
    WorkScope One(0);
    auto Prim = batchedMatMul(End - Begin, S, C, M);
    if (!Prim->prim)
      return false;
    float *Vb = S.v + Begin * S.vPlane;
    float *Ub = const_cast<float *>(U) + Begin * C * M;
    if (S.channelMajor)
      std::swap(Vb, Ub);
    ThreadMemories &Mem = threadMemories(Prim);
    Mem.src.set_data_handle(Vb);
    Mem.weights.set_data_handle(Ub);
    Mem.dst.set_data_handle(S.z + Begin * S.zPlane);
    thread_local std::vector<dnnl_exec_arg_t> Args;
    Args.assign({{DNNL_ARG_SRC, Mem.src.get()},
                 {DNNL_ARG_WEIGHTS, Mem.weights.get()},
                 {DNNL_ARG_DST, Mem.dst.get()}});
    executePrimitive(*Prim, Args);
    threadStream().wait();
    return true;
  } catch (...) {
    return false; // not thrown on: this may be a pool thread
  }
}

/// The products run channel-major (see TileScratch) for at most this many
/// tiles and positions' U planes of at least this many bytes, more than a
/// core's L2 holds: resnet18's 512-channel 7x7 convs took 3.0 ms instead
/// of 3.4, its 256-channel 14x14 ones (256 KB planes) 2.3 instead of 1.9.
constexpr int64_t kChannelMajorTiles = 32;
constexpr int64_t kChannelMajorPlaneBytes = int64_t(1) << 20;

template <class F>
bool runWinograd(Geometry G, const Tensor &X, const Tensor &W, const Tail &Tl,
                 bool ConstantWeights, Tensor &Out) {
  constexpr int64_t A2 = F::Alpha * F::Alpha;
  G.tilesH = (G.Ho + F::M - 1) / F::M;
  G.tilesW = (G.Wo + F::M - 1) / F::M;
  G.tiles = G.N * G.tilesH * G.tilesW;
  WinogradProducts Form = winogradProducts();
  bool ChannelMajor =
      Form == WinogradProducts::Auto
          ? G.tiles <= kChannelMajorTiles &&
                G.C * G.M * (int64_t)sizeof(float) >= kChannelMajorPlaneBytes
          : Form == WinogradProducts::ChannelMajor;
  memory::desc UDesc = plainDesc({A2, G.C, G.M});
  memory U;
  try {
    auto MakeU = [&](memory R) {
      transformWeights<F>(G, W.data<float>(), ChannelMajor,
                          static_cast<float *>(R.get_data_handle()));
      return R;
    };
    if (ConstantWeights) {
      PrimitiveKey Form;
      Form.add(kWinogradTag);
      Form.add(F::M);
      Form.add(ChannelMajor);
      U = cachedWeightCopy(W, Form,
                           [&] { return MakeU(memory(UDesc, engine())); });
    } else {
      U = MakeU(threadScratch(UDesc, 2));
    }
  } catch (const dnnl::error &) {
    return false;
  }
  const float *XP = X.data<float>();
  const float *UP = static_cast<const float *>(U.get_data_handle());
  float *OutP = Out.data<float>();
  int64_t TileRows = G.N * G.tilesH;
  // Three phases over (chunks of) the conv. Each transform splits the tile
  // rows between threads, the matmul the positions (each thread reads only
  // its share of U), one thread each on the runtime's pool rather than
  // oneDNN's OpenMP team, which would sleep and wake between transforms.
  // V and Z are bounded by the scratch limit: a large batch goes through
  // in chunks of tile rows.
  int64_t RowValues = A2 * G.tilesW * std::max(G.C, G.M);
  int64_t ChunkRows = std::max<int64_t>(
      1, winogradScratchLimit() / (RowValues * (int64_t)sizeof(float)));
  for (int64_t First = 0; First < TileRows; First += ChunkRows) {
    int64_t Last = std::min(TileRows, First + ChunkRows);
    TileScratch S;
    try {
      S = tileScratch(A2, (Last - First) * G.tilesW, G.C, G.M, ChannelMajor);
    } catch (const dnnl::error &) {
      return false;
    }
    // Transform chunks of at least ~64K values (tens of microseconds).
    int64_t Grain = std::max<int64_t>(1, (int64_t(1) << 16) / RowValues);
    parallelTiles(Last - First, Grain, [&](int64_t Begin, int64_t End) {
      transformInput<F>(G, XP, S, First, First + Begin, First + End);
    });
    std::atomic<bool> Failed{false};
    parallelTiles(A2, A2 / 4, [&](int64_t Begin, int64_t End) {
      if (!multiplyPositions(S, UP, Begin, End, G.C, G.M))
        Failed = true;
    });
    if (Failed)
      return false; // the direct kernel overwrites all of Out
    parallelTiles(Last - First, Grain, [&](int64_t Begin, int64_t End) {
      if (ChannelMajor)
        transformOutput<F, true>(G, S, Tl, OutP, First, First + Begin,
                                 First + End);
      else
        transformOutput<F, false>(G, S, Tl, OutP, First, First + Begin,
                                  First + End);
    });
  }
  return true;
}

#pragma GCC pop_options

bool cpuHasAvx2Fma() {
  static const bool Has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return Has;
}

} // namespace

WinogradChoice winogradChoice() {
  return winogradChoiceFlag().load(std::memory_order_relaxed);
}

void setWinogradChoice(WinogradChoice C) { winogradChoiceFlag().store(C); }

WinogradProducts winogradProducts() {
  return ProductsFlag.load(std::memory_order_relaxed);
}

void setWinogradProducts(WinogradProducts P) { ProductsFlag.store(P); }

int64_t winogradScratchLimit() {
  return ScratchLimit.load(std::memory_order_relaxed);
}

void setWinogradScratchLimit(int64_t Bytes) {
  ScratchLimit.store(std::max<int64_t>(1, Bytes));
}

int64_t winogradConvCalls() { return Calls.load(); }

bool winogradConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                         const ConvParams &P, const BlockedConvLayout &L,
                         const PostOps &Post, Tensor &Out) {
  WinogradChoice Choice = winogradChoice();
  if (Choice == WinogradChoice::Off || !dnnlEnabled() || !cpuHasAvx2Fma() ||
      !allFloat32({&X, &W, B, &Out}))
    return false;
  int64_t Db = L.dataBlock, Ob = L.outBlock;
  if ((Db != 8 && Db != 16) || (Ob != 8 && Ob != 16) ||
      L.kernelInputBlock != Db || X.rank() != 5 || W.rank() != 6 ||
      Out.rank() != 5 || X.shape()[4] != Db || Out.shape()[4] != Ob ||
      W.shape()[2] != 3 || W.shape()[3] != 3 || W.shape()[4] != Db ||
      W.shape()[5] != Ob || P.group != 1)
    return false;
  auto AllOnes = [](const std::vector<int64_t> &V) {
    return V.size() == 2 && V[0] == 1 && V[1] == 1;
  };
  if (!AllOnes(P.strides) || !AllOnes(P.dilations) || P.padBegin.size() != 2 ||
      P.padEnd.size() != 2)
    return false;
  Geometry G{};
  G.N = X.shape()[0];
  G.C = X.shape()[1] * Db;
  G.M = Out.shape()[1] * Ob;
  G.H = X.shape()[2];
  G.W = X.shape()[3];
  G.Ho = Out.shape()[2];
  G.Wo = Out.shape()[3];
  G.padTop = P.padBegin[0];
  G.padLeft = P.padBegin[1];
  G.dataBlock = Db;
  G.outBlock = Ob;
  for (int64_t Pad : {P.padBegin[0], P.padBegin[1], P.padEnd[0], P.padEnd[1]})
    if (Pad < 0)
      return false;
  if (W.shape()[0] * Ob != G.M || W.shape()[1] * Db != G.C ||
      G.Ho != G.H + P.padBegin[0] + P.padEnd[0] - 2 ||
      G.Wo != G.W + P.padBegin[1] + P.padEnd[1] - 2 || G.N == 0 || G.Ho <= 0 ||
      G.Wo <= 0 || (B && B->numel() != G.M))
    return false;
  int Tile = Choice == WinogradChoice::Tile2 ? 2
             : Choice == WinogradChoice::Tile4
                 ? 4
                 : winogradAutoTile(G.N, G.C, G.M, G.Ho, G.Wo);
  if (Tile == 0)
    return false;
  std::optional<Tail> Tl = makeTail(B, Post, Out, G.M);
  if (!Tl)
    return false;
  bool Ran = Tile == 4
                 ? runWinograd<Tile4>(G, X, W, *Tl, P.constantWeights, Out)
                 : runWinograd<Tile2>(G, X, W, *Tl, P.constantWeights, Out);
  if (Ran)
    ++Calls;
  return Ran;
}

// Auto's tile size. Each of the alpha^2 matmuls reads its transformed weights
// (16/9 of the conv's for m = 2, 36/9 for m = 4) for as many rows as there are
// tiles, so with few tiles the conv waits for its weights: m = 4 from 32 tiles
// (resnet18's 56x56 and 28x28), else m = 2 (14x14, and 7x7 on AVX2), and
// nothing below 32 channels, where the transforms weigh more
// (docs/benchmarks.md). With AVX-512, oneDNN's direct kernels run near peak,
// and 7x7 (16 tiles of m = 2) stays direct. Measured in resnet18, one thread,
// against the direct kernel: Zen 3 (AVX2) 512x7x7 3.3 (m = 2) / 3.8 ms,
// 256x14x14 2.0 (m = 4) / 3.1; Zen 4 (AVX-512 on the two 256-bit pipes of AVX2)
// 64x56x56 0.9 / 2.0, 128x28x28 0.9 / 2.0, 256x14x14 1.25 (m = 4: 1.6) / 2.0,
// 512x7x7 2.7 (m = 2) / 2.3. A core with two 512-bit FMA pipes (a Xeon) is
// unmeasured; RIVET_WINOGRAD=off|2|4 forces the choice.
int winogradAutoTile(int64_t N, int64_t C, int64_t M, int64_t Ho, int64_t Wo) {
  bool Avx512 = cpuHasAvx512();
  if (C < 32 || M < 32)
    return 0;
  auto Tiles = [&](int64_t T) {
    return N * ((Ho + T - 1) / T) * ((Wo + T - 1) / T);
  };
  constexpr int64_t kMinTiles = 32;
  if (Tiles(4) >= kMinTiles)
    return 4;
  return (Tiles(2) >= kMinTiles || !Avx512) ? 2 : 0;
}

} // namespace rivet
