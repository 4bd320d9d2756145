//===- lstm_stack_vm_test.cc - Stacked lstm layers through the VM ---------===//
//
// The committed two-layer LSTM (torch's nn.LSTM(16, 32, num_layers=2)) at
// lengths on both sides of lstm_stack's pipelining threshold, compiled at
// every opt level and run at one and two threads, against the reference
// interpreter running the two lstm calls as imported. From -O2 the layers
// are one lstm_stack call.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Printer.h"
#include "ir/transforms/Pass.h"
#include "kernels/Random.h"
#include "kernels/Threading.h"
#include "support/Executors.h"

#include <gtest/gtest.h>

using namespace rivet;

namespace {

ir::Module lstmStackModel() {
  return frontend::importOnnxFile(RIVET_SOURCE_DIR
                                  "/tests/models/lstm_stack/model.onnx");
}

TEST(LstmStackVm, LayersFuseFromO2) {
  for (int Level : {1, 2, 3}) {
    ir::Module M = lstmStackModel();
    ir::PassContext Ctx;
    Ctx.optLevel = Level;
    ir::optimize(M, Ctx);
    std::string Text = ir::printModule(M);
    EXPECT_EQ(Text.find("lstm_stack(") != std::string::npos, Level >= 2)
        << "-O" << Level;
  }
}

TEST(LstmStackVm, EveryOptLevelAndThreadCountAgreesWithTheInterpreter) {
  ir::Module M = lstmStackModel();
  for (int64_t Seq : {0, 7, 40, 150}) {
    std::vector<Tensor> In = {
        randomTensor({Seq, 3, 16}, DType::Float32, 1 + (uint64_t)Seq),
        randomTensor({2, 3, 32}, DType::Float32, 2),
        randomTensor({2, 3, 32}, DType::Float32, 3)};
    std::vector<Tensor> Want = rivet::testing::runOnInterpreter(M, In);
    for (int Threads : {1, 2}) {
      int Saved = numThreads();
      setNumThreads(Threads);
      for (int Level = 0; Level <= 3; ++Level) {
        SCOPED_TRACE("seq " + std::to_string(Seq) + ", -O" +
                     std::to_string(Level) + ", " + std::to_string(Threads) +
                     " threads");
        std::vector<Tensor> Got =
            rivet::testing::runOnVM(M, Level, vm::NativeCode::Jit, In);
        ASSERT_EQ(Got.size(), Want.size());
        for (size_t O = 0; O < Want.size(); ++O)
          EXPECT_TRUE(allClose(Got[O], Want[O], 1e-5, 1e-5)) << "output " << O;
      }
      setNumThreads(Saved);
    }
  }
}

} // namespace
