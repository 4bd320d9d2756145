//===- sequence_loop_test.cc - ONNX sequences carried by Loops ------------===//
//
// ONNX models whose Loop carries a sequence: appends, inserts at positions
// (negative ones too), erases, SequenceAt and SequenceLength inside the body,
// the sequence passed into If branches, sequences that start empty or from
// SplitToSequence, and ConcatFromSequence with new_axis 0 and 1 after the
// loop. Each is imported and run by the reference interpreter and by the VM
// at -O0 and -O3, for trip counts from 0 up, and all must agree (an empty
// sequence that cannot be concatenated fails on every executor).
//
// The cost of the loops is counted, not timed: VM instructions per run and
// elements the VM's packed Lists copy (vm/PackedList.h) grow linearly with
// the trip count, for these models and for the committed models that build
// sequences (tests/models/seq_insert_loop, lstm_cell_loop, gru_decoder).
//
//===----------------------------------------------------------------------===//
#include "OnnxTestUtil.h"
#include "frontend/onnx/Importer.h"
#include "support/Differential.h"
#include "vm/PackedList.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

using namespace rivet;
using namespace rivet::testing::diff;
namespace fs = std::filesystem;

namespace {

using TP = onnx::TensorProto;

/// Small builder over GraphProto: tensors and sequences of float tensors.
struct Graph {
  onnx::GraphProto *G;

  static void tensorInfo(onnx::TypeProto_Tensor *T, int32_t ElemType,
                         const std::vector<std::string> &Dims) {
    T->set_elem_type(ElemType);
    auto *S = T->mutable_shape();
    for (const std::string &D : Dims) {
      auto *Dim = S->add_dim();
      if (std::isdigit((unsigned char)D[0]))
        Dim->set_dim_value(std::stoll(D));
      else if (D != "?")
        Dim->set_dim_param(D);
    }
  }
  void input(const std::string &Name, int32_t ElemType,
             const std::vector<std::string> &Dims) {
    auto *V = G->add_input();
    V->set_name(Name);
    tensorInfo(V->mutable_type()->mutable_tensor_type(), ElemType, Dims);
  }
  void output(const std::string &Name, int32_t ElemType,
              const std::vector<std::string> &Dims) {
    auto *V = G->add_output();
    V->set_name(Name);
    tensorInfo(V->mutable_type()->mutable_tensor_type(), ElemType, Dims);
  }
  static void sequenceInfo(onnx::ValueInfoProto *V, const std::string &Name) {
    V->set_name(Name);
    V->mutable_type()
        ->mutable_sequence_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->set_elem_type(TP::FLOAT);
  }
  void sequenceInput(const std::string &Name) {
    sequenceInfo(G->add_input(), Name);
  }
  void sequenceOutput(const std::string &Name) {
    sequenceInfo(G->add_output(), Name);
  }
  onnx::NodeProto *node(const std::string &Op, std::vector<std::string> Ins,
                        std::vector<std::string> Outs) {
    auto *N = G->add_node();
    N->set_op_type(Op);
    N->set_name(Op + "_" + std::to_string(G->node_size()));
    for (auto &I : Ins)
      N->add_input(I);
    for (auto &O : Outs)
      N->add_output(O);
    return N;
  }
  static void attr(onnx::NodeProto *N, const std::string &Name, int64_t V) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto::INT);
    A->set_i(V);
  }
  static onnx::GraphProto *graphAttr(onnx::NodeProto *N,
                                     const std::string &Name) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto::GRAPH);
    A->mutable_g()->set_name(Name);
    return A->mutable_g();
  }
  void constant(const std::string &Name, int64_t V) {
    auto *T = G->add_initializer();
    T->set_name(Name);
    T->set_data_type(TP::INT64);
    T->add_int64_data(V);
  }
};

/// What the loop body does to the sequence `s` it carries, given the row
/// `row` (xs[i]) and the step `i`; returns the name of the new sequence.
using BodyStep = std::function<std::string(Graph &B)>;

/// main(xs: float[?, 4], trips: int64) = Loop(trips) carrying a sequence
/// (empty, or SplitToSequence(xs) when FromSplit) and acc = sum of
/// SequenceAt(s, -1) over the steps; outputs the sequence's length, acc,
/// the sequence, and (Concat) ConcatFromSequence with new_axis 0 and 1.
onnx::ModelProto sequenceLoop(const BodyStep &Step, bool FromSplit,
                              bool Concat) {
  onnx::ModelProto M;
  M.set_ir_version(8);
  auto *O = M.add_opset_import();
  O->set_domain("");
  O->set_version(13);
  Graph G{M.mutable_graph()};
  G.G->set_name("sequence_loop");
  G.input("xs", TP::FLOAT, {"?", "4"});
  G.input("trips", TP::INT64, {});
  G.constant("zero", 0);
  G.constant("one", 1);
  G.constant("two", 2);
  G.constant("minus_one", -1);
  if (FromSplit) {
    Graph::attr(G.node("SplitToSequence", {"xs"}, {"s0"}), "keepdims", 0);
  } else {
    Graph::attr(G.node("SequenceEmpty", {}, {"s0"}), "dtype", TP::FLOAT);
  }
  G.node("ReduceSum", {"xs"}, {"acc0"})->add_attribute()->set_name("keepdims");
  G.G->mutable_node(G.G->node_size() - 1)
      ->mutable_attribute(0)
      ->set_type(onnx::AttributeProto::INT);
  auto *L = G.node("Loop", {"trips", "", "s0", "acc0"}, {"s_out", "acc_out"});
  Graph B{Graph::graphAttr(L, "body")};
  B.input("i", TP::INT64, {});
  B.input("c", TP::BOOL, {});
  B.sequenceInput("s");
  B.input("acc", TP::FLOAT, {});
  B.node("Gather", {"xs", "i"}, {"row"});
  std::string S = Step(B);
  B.node("SequenceAt", {S, "minus_one"}, {"last"});
  B.node("ReduceSum", {"last"}, {"last_sum"})
      ->add_attribute()
      ->set_name("keepdims");
  B.G->mutable_node(B.G->node_size() - 1)
      ->mutable_attribute(0)
      ->set_type(onnx::AttributeProto::INT);
  B.node("Add", {"acc", "last_sum"}, {"acc_next"});
  B.node("Identity", {"c"}, {"c_next"});
  B.output("c_next", TP::BOOL, {});
  B.sequenceOutput(S);
  B.output("acc_next", TP::FLOAT, {});
  G.node("SequenceLength", {"s_out"}, {"len"});
  G.output("len", TP::INT64, {});
  G.output("acc_out", TP::FLOAT, {});
  if (Concat) {
    Graph::attr(G.node("ConcatFromSequence", {"s_out"}, {"cat"}), "axis", 0);
    auto *Stack = G.node("ConcatFromSequence", {"s_out"}, {"stacked"});
    Graph::attr(Stack, "axis", 1);
    Graph::attr(Stack, "new_axis", 1);
    G.output("cat", TP::FLOAT, {"?", "4"});
    G.output("stacked", TP::FLOAT, {"?", "?"});
  }
  G.sequenceOutput("s_out");
  return M;
}

/// The body steps, by name.
struct NamedStep {
  const char *Name;
  BodyStep Step;
};
std::vector<NamedStep> bodySteps() {
  return {
      {"append",
       [](Graph &B) {
         B.node("SequenceInsert", {"s", "row"}, {"s1"});
         return std::string("s1");
       }},
      {"insert_front",
       [](Graph &B) {
         B.node("SequenceInsert", {"s", "row", "zero"}, {"s1"});
         return std::string("s1");
       }},
      {"insert_at_end_by_position",
       [](Graph &B) {
         B.node("SequenceLength", {"s"}, {"n"});
         B.node("SequenceInsert", {"s", "row", "n"}, {"s1"});
         return std::string("s1");
       }},
      {"insert_negative_middle",
       // at -(len / 2): before the middle element, counted from the back
       [](Graph &B) {
         B.node("SequenceLength", {"s"}, {"n"});
         B.node("Div", {"n", "two"}, {"half"});
         B.node("Neg", {"half"}, {"pos"});
         B.node("SequenceInsert", {"s", "row", "pos"}, {"s1"});
         return std::string("s1");
       }},
      {"insert_two_erase_one",
       // appends row and 2 * row, then erases at -1 - (i % 2)
       [](Graph &B) {
         B.node("SequenceInsert", {"s", "row"}, {"s1"});
         B.node("Add", {"row", "row"}, {"row2"});
         B.node("SequenceInsert", {"s1", "row2"}, {"s2"});
         B.node("Mod", {"i", "two"}, {"parity"});
         B.node("Sub", {"minus_one", "parity"}, {"pos"});
         B.node("SequenceErase", {"s2", "pos"}, {"s3"});
         return std::string("s3");
       }},
      {"erase_front_when_long",
       // appends, then erases the first element once there are 3 (a queue)
       [](Graph &B) {
         B.node("SequenceInsert", {"s", "row"}, {"s1"});
         B.node("SequenceLength", {"s1"}, {"n"});
         B.node("Greater", {"n", "two"}, {"long"});
         auto *If = B.node("If", {"long"}, {"s2"});
         Graph Then{Graph::graphAttr(If, "then_branch")};
         Then.node("SequenceErase", {"s1", "zero"}, {"t"});
         Then.sequenceOutput("t");
         Graph Else{Graph::graphAttr(If, "else_branch")};
         Else.node("Identity", {"s1"}, {"e"});
         Else.sequenceOutput("e");
         return std::string("s2");
       }},
      {"if_chooses_insert_or_erase",
       // even steps insert at the front, odd steps append the element at 0
       // and erase the last but one
       [](Graph &B) {
         B.node("Mod", {"i", "two"}, {"parity"});
         B.node("Equal", {"parity", "zero"}, {"even"});
         auto *If = B.node("If", {"even"}, {"s1"});
         Graph Then{Graph::graphAttr(If, "then_branch")};
         Then.node("SequenceInsert", {"s", "row", "zero"}, {"t"});
         Then.sequenceOutput("t");
         Graph Else{Graph::graphAttr(If, "else_branch")};
         Else.node("SequenceAt", {"s", "zero"}, {"first"});
         Else.node("SequenceInsert", {"s", "first"}, {"e1"});
         Else.node("SequenceInsert", {"e1", "row"}, {"e2"});
         Else.node("SequenceErase", {"e2", "minus_one"}, {"e3"});
         Else.sequenceOutput("e3");
         return std::string("s1");
       }},
  };
}

Tensor rows(int64_t N) {
  std::vector<float> V;
  for (int64_t I = 0; I < 4 * std::max<int64_t>(N, 1); ++I)
    V.push_back((float)((I * 7) % 11) - 3.5f);
  return Tensor::fromVector<float>(std::move(V), {std::max<int64_t>(N, 1), 4});
}

} // namespace

TEST(SequenceLoop, InterpreterAndVMAgree) {
  for (const NamedStep &S : bodySteps())
    for (bool FromSplit : {false, true})
      for (bool Concat : {false, true}) {
        ir::Module M =
            test::importModel(sequenceLoop(S.Step, FromSplit, Concat));
        for (int64_t N : {0, 1, 2, 3, 7, 20}) {
          std::string What = std::string(S.Name) +
                             (FromSplit ? ", from SplitToSequence" : "") +
                             (Concat ? ", concatenated" : "") + ", trips " +
                             std::to_string(N);
          Outcome O =
              expectAgreement(M, {rows(N), Tensor::scalar<int64_t>(N)}, What);
          // Only concatenating an empty sequence fails.
          bool Empty = N == 0 && !FromSplit;
          EXPECT_EQ(O.Error.has_value(), Empty && Concat)
              << What << ": " << O.Error.value_or("no error");
        }
      }
}

/// Instructions per run of the VM and elements its packed Lists copy per
/// run, for M compiled at Level on In.
struct Cost {
  uint64_t Instructions, Copies;
};
Cost costOf(const std::shared_ptr<vm::Executable> &Exe,
            const std::vector<Tensor> &In) {
  vm::VirtualMachine VM(Exe);
  std::vector<vm::ObjectRef> Args;
  for (const Tensor &T : In)
    Args.push_back(vm::makeTensor(T));
  VM.invoke("main", Args); // warm: per-VM caches
  uint64_t I0 = VM.instructionCount(), C0 = vm::packedListElementsCopied();
  VM.invoke("main", Args);
  return {VM.instructionCount() - I0, vm::packedListElementsCopied() - C0};
}

/// Expects Cost(n) of a loop of n steps to grow linearly from n = 10 to 100
/// to 1000: the instructions' growth from 100 to 1000 within 20% of 10
/// times that from 10 to 100 (a List walked per step would give 100
/// times), and at most 4 elements copied per step.
void expectLinear(const std::function<Cost(int64_t)> &CostAt,
                  const std::string &What) {
  Cost A = CostAt(10), B = CostAt(100), C = CostAt(1000);
  double Ratio = ((double)C.Instructions - (double)B.Instructions) /
                 (10 * ((double)B.Instructions - (double)A.Instructions));
  EXPECT_GT(Ratio, 0.8) << What << ": " << A.Instructions << ", "
                        << B.Instructions << ", " << C.Instructions;
  EXPECT_LT(Ratio, 1.25) << What << ": " << A.Instructions << ", "
                         << B.Instructions << ", " << C.Instructions;
  EXPECT_LE(C.Copies, 4000u) << What;
}

TEST(SequenceLoop, CostGrowsLinearlyWithTheTripCount) {
  for (const NamedStep &S : bodySteps()) {
    // Inserting anywhere but at the end copies the sequence (an array):
    // only the appending and queue-like loops are O(1) per step.
    std::string Name = S.Name;
    if (Name != "append" && Name != "insert_at_end_by_position" &&
        Name != "erase_front_when_long")
      continue;
    ir::Module M = test::importModel(sequenceLoop(S.Step, false, true));
    for (int Level : {0, 3}) {
      vm::CompileOptions O;
      O.optLevel = Level;
      std::shared_ptr<vm::Executable> Exe = vm::compile(M, O);
      expectLinear(
          [&](int64_t N) {
            return costOf(Exe, {rows(N), Tensor::scalar<int64_t>(N)});
          },
          Name + " at -O" + std::to_string(Level));
    }
  }
}

TEST(SequenceLoop, CommittedModelsCostLinearly) {
  const fs::path Models = RIVET_SOURCE_DIR "/tests/models";
  auto Floats = [](std::vector<int64_t> Shape) {
    int64_t N = 1;
    for (int64_t D : Shape)
      N *= D;
    return Tensor::fromVector<float>(std::vector<float>((size_t)N, 0.25f),
                                     Shape);
  };
  struct Model {
    const char *Name;
    std::function<std::vector<Tensor>(int64_t)> Inputs;
  };
  for (const Model &Mo : std::vector<Model>{
           {"seq_insert_loop",
            [&](int64_t N) {
              return std::vector<Tensor>{Floats({N, 8})};
            }},
           {"lstm_cell_loop",
            [&](int64_t N) {
              return std::vector<Tensor>{Floats({N, 2, 16}), Floats({2, 32}),
                                         Floats({2, 32})};
            }},
           {"gru_decoder", [&](int64_t N) {
              return std::vector<Tensor>{
                  Tensor::fromVector<int64_t>({1, 2}, {2}), Floats({2, 32}),
                  Tensor::scalar<int64_t>(N)};
            }}}) {
    fs::path File = Models / Mo.Name / "model.onnx";
    if (!fs::exists(File)) {
      ADD_FAILURE() << "missing " << File;
      continue;
    }
    ir::Module M = frontend::importOnnxFile(File.string());
    std::shared_ptr<vm::Executable> Exe = vm::compile(M);
    expectLinear([&](int64_t N) { return costOf(Exe, Mo.Inputs(N)); }, Mo.Name);
  }
}
