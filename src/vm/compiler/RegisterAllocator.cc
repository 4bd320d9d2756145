//===- RegisterAllocator.cc - Virtual to frame registers ------------------===//
//
// Linear scan without spilling: intervals sorted by start, a register is
// free again once its value's interval ended strictly before the current
// start (so an instruction's result never shares a register with one of its
// operands). Lowest free register first, which keeps frames small.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/RegisterAllocator.h"

#include "kernels/Error.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace rivet::vm::compiler {

void allocateRegisters(LoweredFunction &F) {
  size_t NumV = F.vregType.size();
  // Positions: 0 is the entry (parameters), instruction I is at I + 1.
  constexpr size_t Unset = SIZE_MAX;
  std::vector<size_t> Start(NumV, Unset), End(NumV, 0);
  for (uint32_t P = 0; P < F.numParams; ++P)
    Start[P] = 0;
  std::vector<uint32_t> Uses, Defs;
  for (size_t Idx = 0; Idx < F.code.size(); ++Idx) {
    const PendingInst &P = F.code[Idx];
    if (P.deleted)
      continue;
    Uses.clear();
    Defs.clear();
    instUses(P, Uses);
    instDefs(P, Defs);
    size_t Pos = Idx + 1;
    for (uint32_t D : Defs) {
      if (Start[D] == Unset)
        Start[D] = Pos;
      End[D] = std::max(End[D], Pos);
    }
    for (uint32_t U : Uses) {
      RIVET_CHECK(Start[U] != Unset,
                  "vm compiler: in {}: register v{} used before it is set",
                  F.name, U);
      End[U] = std::max(End[U], Pos);
    }
  }

  std::vector<uint32_t> Order;
  for (uint32_t V = 0; V < NumV; ++V)
    if (Start[V] != Unset)
      Order.push_back(V);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](uint32_t A, uint32_t B) { return Start[A] < Start[B]; });

  std::vector<uint32_t> Map(NumV, kNoVReg);
  using Ending = std::pair<size_t, uint32_t>; // (end, physical register)
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> Active;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> FreeRegs;
  uint32_t NumRegs = 0;
  for (uint32_t V : Order) {
    while (!Active.empty() && Active.top().first < Start[V]) {
      FreeRegs.push(Active.top().second);
      Active.pop();
    }
    uint32_t R;
    if (V < F.numParams) {
      R = NumRegs++; // parameters are processed first, in order
    } else if (!FreeRegs.empty()) {
      R = FreeRegs.top();
      FreeRegs.pop();
    } else {
      R = NumRegs++;
    }
    Map[V] = R;
    Active.push({End[V], R});
  }
  F.numRegisters = std::max<uint32_t>(NumRegs, F.numParams);

  for (PendingInst &P : F.code)
    if (!P.deleted)
      renameRegisters(P, Map);

  // Kill large values after their last use, unless control leaves there
  // anyway (the frame dies or the value is needed on another path).
  for (uint32_t V = 0; V < NumV; ++V) {
    if (Start[V] == Unset || V >= F.killable.size() || !F.killable[V])
      continue;
    size_t Pos = End[V];
    if (Pos == 0)
      continue;
    PendingInst &Last = F.code[Pos - 1];
    const OpcodeInfo &Info = opcodeInfo(Last.inst.op);
    if (Info.ends() || Info.jumps())
      continue;
    Defs.clear();
    instDefs(Last, Defs);
    bool Redefined = false;
    for (uint32_t D : Defs)
      Redefined |= Map[D] == Map[V] && D != V;
    if (!Redefined)
      Last.killAfter.push_back(Map[V]);
  }
}

} // namespace rivet::vm::compiler
