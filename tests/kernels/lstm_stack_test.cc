//===- lstm_stack_test.cc - lstm_stack's kernels --------------------------===//
//
// lstm_stack (FuseLstmStack's operator) against lstm calls layer by layer
// in the reference, and its library kernel (cpu.lstm_stack: layers
// pipelined over the pool's threads) against its reference kernel, over
// layer counts (more layers than the pool makes parts, so that a thread
// runs several), hidden sizes that change from layer to layer, absent
// biases and initial states, batch sizes and sequence lengths on both
// sides of the pipelining threshold (0 and 1 included), at 1, 2 and 3
// threads.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/Kernel.h"
#include "kernels/Threading.h"

#include <cmath>
#include <random>

using namespace rivet;
using namespace rivet::test;

namespace {

struct Stack {
  int64_t Seq, Batch, Input;
  std::vector<int64_t> Hidden; // per layer
  bool Bias = true, Initial = true;
};

Tensor randomTensor(std::mt19937 &Rng, Shape S, float Scale) {
  std::uniform_real_distribution<float> U(-Scale, Scale);
  Tensor T = Tensor::empty(S, DType::Float32);
  for (int64_t J = 0; J < T.numel(); ++J)
    T.data<float>()[J] = U(Rng);
  return T;
}

/// lstm_stack's inputs for St: x, then w, r, b, initial_h, initial_c per
/// layer (R in PyTorch's initial range, so that the recurrence is not
/// chaotic and float32 can follow the reference's double).
std::vector<Tensor> stackInputs(std::mt19937 &Rng, const Stack &St) {
  std::vector<Tensor> In = {
      randomTensor(Rng, {St.Seq, St.Batch, St.Input}, 1.0f)};
  int64_t I = St.Input;
  for (int64_t H : St.Hidden) {
    float Scale = 1.0f / std::sqrt((float)H);
    In.push_back(randomTensor(Rng, {1, 4 * H, I}, Scale));
    In.push_back(randomTensor(Rng, {1, 4 * H, H}, Scale));
    In.push_back(St.Bias ? randomTensor(Rng, {1, 8 * H}, Scale)
                         : Tensor::zeros({0}, DType::Float32));
    for (int K = 0; K < 2; ++K)
      In.push_back(St.Initial ? randomTensor(Rng, {1, St.Batch, H}, 1.0f)
                              : Tensor::zeros({0}, DType::Float32));
    I = H;
  }
  return In;
}

/// The layers as lstm calls of the reference, one after the other.
std::vector<Tensor> layerByLayer(const std::vector<Tensor> &In) {
  std::vector<Tensor> Out;
  Tensor X = In[0];
  for (size_t L = 0; 1 + 5 * L < In.size(); ++L) {
    const Tensor *Op = &In[1 + 5 * L];
    std::vector<Tensor> Layer =
        runAll("lstm",
               {X, Op[0], Op[1], Op[2], Tensor::zeros({0}, DType::Int32), Op[3],
                Op[4], Tensor::zeros({0}, DType::Float32)},
               Attrs{{"direction", std::string("forward")}});
    const Shape &Y = Layer[0].shape();
    X = Layer[0].reshape({Y[0], Y[2], Y[3]});
    Out.insert(Out.end(), Layer.begin(), Layer.end());
  }
  return Out;
}

void expectClose(const std::vector<Tensor> &Got,
                 const std::vector<Tensor> &Want, double Tolerance) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t O = 0; O < Want.size(); ++O) {
    ASSERT_EQ(Got[O].shape(), Want[O].shape()) << "output " << O;
    for (int64_t J = 0; J < Want[O].numel(); ++J)
      ASSERT_NEAR(Got[O].elementAsDouble(J), Want[O].elementAsDouble(J),
                  Tolerance)
          << "output " << O << " element " << J;
  }
}

std::string describe(const Stack &St) {
  std::string S = "seq " + std::to_string(St.Seq) + " batch " +
                  std::to_string(St.Batch) + " input " +
                  std::to_string(St.Input) + " hidden";
  for (int64_t H : St.Hidden)
    S += " " + std::to_string(H);
  return S + (St.Bias ? "" : " no bias") +
         (St.Initial ? "" : " no initial state");
}

TEST(LstmStack, ReferenceIsTheLayersOneAfterTheOther) {
  std::mt19937 Rng(1);
  for (const Stack &St : {Stack{5, 2, 3, {4, 6}}, Stack{1, 1, 2, {3, 3, 2}},
                          Stack{0, 2, 3, {4, 5}, false, false}}) {
    SCOPED_TRACE(describe(St));
    std::vector<Tensor> In = stackInputs(Rng, St);
    // The same kernel code in double: equal up to the last bits.
    expectClose(runAll("lstm_stack", In, {}), layerByLayer(In), 1e-12);
  }
}

TEST(LstmStack, LibraryKernelAgreesWithTheReferenceAtEveryThreadCount) {
  const KernelInfo *K = KernelRegistry::global().libraryKernel("lstm_stack");
  ASSERT_NE(K, nullptr);
  EXPECT_EQ(K->name, "cpu.lstm_stack");
  std::mt19937 Rng(20261128);
  std::uniform_int_distribution<int64_t> Hidden(1, 40), Layers(1, 4),
      Batch(1, 7);
  const int64_t Seqs[] = {0, 1, 5, 31, 32, 33, 70, 200};
  for (int Trial = 0; Trial < 48; ++Trial) {
    Stack St{Seqs[Trial % 8], Batch(Rng), Hidden(Rng), {}};
    for (int64_t L = Layers(Rng); L > 0; --L)
      St.Hidden.push_back(Hidden(Rng));
    St.Bias = Trial % 3 != 1;
    St.Initial = Trial % 4 != 2;
    std::vector<Tensor> In = stackInputs(Rng, St);
    std::vector<Tensor> Want = runAll("lstm_stack", In, {});
    for (int Threads : {1, 2, 3}) {
      SCOPED_TRACE(describe(St) + ", " + std::to_string(Threads) + " threads");
      SettingScope<int> T(numThreads, setNumThreads, Threads);
      expectClose(runAll("cpu.lstm_stack", In, {}), Want, 2e-5);
    }
  }
}

/// Nine layers at two threads: the pool makes eight parts of them, so that
/// one part runs two layers, bottom up.
TEST(LstmStack, MoreLayersThanPartsRunBottomUp) {
  std::mt19937 Rng(9);
  Stack St{64, 2, 5, {8, 7, 16, 3, 9, 8, 8, 12, 5}};
  std::vector<Tensor> In = stackInputs(Rng, St);
  std::vector<Tensor> Want = runAll("lstm_stack", In, {});
  SettingScope<int> T(numThreads, setNumThreads, 2);
  for (int Run = 0; Run < 5; ++Run)
    expectClose(runAll("cpu.lstm_stack", In, {}), Want, 2e-5);
}

TEST(LstmStack, MalformedCallsAreRefused) {
  std::mt19937 Rng(2);
  std::vector<Tensor> In = stackInputs(Rng, Stack{4, 2, 3, {5, 6}});
  for (const char *Kernel : {"lstm_stack", "cpu.lstm_stack"}) {
    std::vector<Tensor> Short(In.begin(), In.end() - 1);
    EXPECT_THROW(runAll(Kernel, Short, {}), Error) << Kernel;
    std::vector<Tensor> WrongInput = In;
    // Layer 2's w must take layer 1's 5 hidden units.
    WrongInput[6] = randomTensor(Rng, {1, 24, 4}, 1.0f);
    EXPECT_THROW(runAll(Kernel, WrongInput, {}), Error) << Kernel;
  }
}

} // namespace
