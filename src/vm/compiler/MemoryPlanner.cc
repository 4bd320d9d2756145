//===- MemoryPlanner.cc - Shared storage for static tensors ---------------===//
//
// Lowering emits every static-shape tensor as AllocStorage (own storage) +
// AllocTensor, and an arena AllocStorage at the function's entry. This pass
// moves the tensors that cannot escape the invocation into the arena at
// planned offsets and deletes their own AllocStorage; the arena is deleted
// when nothing lands in it.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace rivet::vm::compiler {

namespace {

uint64_t alignUp(uint64_t N) {
  return (std::max<uint64_t>(N, 1) + kStorageAlignment - 1) /
         kStorageAlignment * kStorageAlignment;
}

struct UnionFind {
  std::vector<uint32_t> Parent;
  explicit UnionFind(size_t N) : Parent(N) {
    std::iota(Parent.begin(), Parent.end(), 0u);
  }
  uint32_t find(uint32_t X) {
    while (Parent[X] != X)
      X = Parent[X] = Parent[Parent[X]];
    return X;
  }
  void unite(uint32_t A, uint32_t B) { Parent[find(A)] = find(B); }
};

/// One tensor to place: lives over [start, end] (instruction indices).
struct Item {
  size_t inst; // the AllocTensor
  size_t start, end;
  uint64_t size;
  uint64_t offset = 0;
};

/// Greedy best fit: free blocks of released items are reused, the smallest
/// that fits first; otherwise the arena grows. Returns the arena size.
uint64_t placeItems(std::vector<Item> &Items) {
  std::sort(Items.begin(), Items.end(),
            [](const Item &A, const Item &B) { return A.start < B.start; });
  std::map<uint64_t, uint64_t> Free; // offset -> size, merged when adjacent
  std::multimap<size_t, const Item *> Active; // by end
  uint64_t Top = 0;
  auto Release = [&](uint64_t Off, uint64_t Size) {
    auto [It, Ok] = Free.emplace(Off, Size);
    (void)Ok;
    auto Next = std::next(It);
    if (Next != Free.end() && It->first + It->second == Next->first) {
      It->second += Next->second;
      Free.erase(Next);
    }
    if (It != Free.begin()) {
      auto Prev = std::prev(It);
      if (Prev->first + Prev->second == It->first) {
        Prev->second += It->second;
        Free.erase(It);
      }
    }
  };
  for (Item &I : Items) {
    while (!Active.empty() && Active.begin()->first < I.start) {
      Release(Active.begin()->second->offset, Active.begin()->second->size);
      Active.erase(Active.begin());
    }
    auto Best = Free.end();
    for (auto It = Free.begin(); It != Free.end(); ++It)
      if (It->second >= I.size &&
          (Best == Free.end() || It->second < Best->second))
        Best = It;
    if (Best != Free.end()) {
      I.offset = Best->first;
      uint64_t Rest = Best->second - I.size;
      uint64_t RestOff = Best->first + I.size;
      Free.erase(Best);
      if (Rest)
        Free.emplace(RestOff, Rest);
    } else if (!Free.empty() &&
               std::prev(Free.end())->first + std::prev(Free.end())->second ==
                   Top) {
      // Grow the arena from the free block at its end.
      auto Last = std::prev(Free.end());
      I.offset = Last->first;
      Free.erase(Last);
      Top = I.offset + I.size;
    } else {
      I.offset = Top;
      Top += I.size;
    }
    Active.emplace(I.end, &I);
  }
  return Top;
}

} // namespace

uint64_t planMemory(LoweredFunction &F, bool Enabled) {
  std::vector<PendingInst> &Code = F.code;
  size_t NumV = F.vregType.size();
  auto DeleteArena = [&] {
    if (F.arenaVReg != kNoVReg && !Code.empty() &&
        Code[0].inst.op == Opcode::AllocStorage)
      Code[0].deleted = true;
    F.arenaVReg = kNoVReg;
  };
  if (!Enabled || F.arenaVReg == kNoVReg) {
    DeleteArena();
    return 0;
  }

  UnionFind Groups(NumV);
  std::vector<bool> Escapes(NumV, false);
  std::vector<size_t> LastUse(NumV, 0);
  std::vector<size_t> StorageDef(NumV, SIZE_MAX); // own AllocStorage index
  std::vector<uint32_t> Uses, Defs;
  for (size_t Idx = 0; Idx < Code.size(); ++Idx) {
    const PendingInst &P = Code[Idx];
    if (P.deleted)
      continue;
    const Instruction &I = P.inst;
    Uses.clear();
    Defs.clear();
    instUses(P, Uses);
    instDefs(P, Defs);
    for (uint32_t U : Uses)
      LastUse[U] = std::max(LastUse[U], Idx);
    for (uint32_t D : Defs)
      LastUse[D] = std::max(LastUse[D], Idx);
    const OpcodeInfo &Info = opcodeInfo(I.op);
    if (Info.aliasesA()) // dst is a view of reg[a]'s storage
      Groups.unite(I.dst, I.a);
    if (P.viewsFirstInput && !P.regs.empty()) // may be a view of regs[0]'s
      Groups.unite(I.dst, P.regs[0]);
    if (Info.escapes() || (I.op == Opcode::InvokeKernel &&
                           KernelEntry::keepsOperands(P.kernelKind)))
      for (uint32_t U : Uses)
        Escapes[U] = true;
    // The arena is host memory: tensors on another device keep their own
    // storage (the device's caching allocator reuses it across runs).
    if (I.op == Opcode::AllocStorage && P.ownStorage && I.c == 0)
      StorageDef[I.dst] = Idx;
  }
  // A group escapes when any member does; it lives until its last member's
  // last use.
  std::vector<bool> GroupEscapes(NumV, false);
  std::vector<size_t> GroupEnd(NumV, 0);
  for (uint32_t V = 0; V < NumV; ++V) {
    uint32_t G = Groups.find(V);
    if (Escapes[V])
      GroupEscapes[G] = true;
    GroupEnd[G] = std::max(GroupEnd[G], LastUse[V]);
  }

  std::vector<Item> Items;
  for (size_t Idx = 0; Idx < Code.size(); ++Idx) {
    const PendingInst &P = Code[Idx];
    if (P.deleted || P.inst.op != Opcode::AllocTensor)
      continue;
    uint32_t S = P.inst.a;
    if (S >= NumV || StorageDef[S] == SIZE_MAX)
      continue;
    uint32_t G = Groups.find(P.inst.dst);
    if (GroupEscapes[G])
      continue;
    Items.push_back({Idx, Idx, std::max(GroupEnd[G], Idx), alignUp(P.bytes)});
  }
  if (Items.empty()) {
    DeleteArena();
    return 0;
  }
  uint64_t Size = placeItems(Items);
  for (const Item &It : Items) {
    PendingInst &P = Code[It.inst];
    Code[StorageDef[P.inst.a]].deleted = true;
    P.inst.a = F.arenaVReg;
    P.inst.imm = (int64_t)It.offset;
    F.killable[P.inst.dst] = false; // killing frees nothing: the arena stays
  }
  Code[0].inst.imm = (int64_t)Size;
  return Size;
}

} // namespace rivet::vm::compiler
