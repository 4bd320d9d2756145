//===- PlaceListElements.cc - Tensors made to be appended to a List -------===//
//
// The List is read where the tensor is allocated, so it must hold its value
// there already: every definition of its register comes before the
// allocation (jumps go forward only), and none between the allocation and
// the append. Placement never changes a result; a List that turns out to
// have no room, or a tensor appended elsewhere, only loses the view.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/PlaceListElements.h"

namespace rivet::vm::compiler {

void placeListElements(LoweredFunction &F,
                       const std::vector<KernelEntry> &Kernels) {
  // Per virtual register: the indices of the instructions that define it.
  std::vector<std::vector<uint32_t>> Defs;
  std::vector<uint32_t> Regs;
  for (uint32_t I = 0; I < F.code.size(); ++I) {
    Regs.clear();
    instDefs(F.code[I], Regs);
    for (uint32_t R : Regs) {
      if (R >= Defs.size())
        Defs.resize(R + 1);
      Defs[R].push_back(I);
    }
  }
  auto DefsOf = [&](uint32_t R) -> const std::vector<uint32_t> & {
    static const std::vector<uint32_t> None;
    return R < Defs.size() ? Defs[R] : None;
  };
  for (uint32_t J = 0; J < F.code.size(); ++J) {
    const PendingInst &Append = F.code[J];
    if (Append.deleted || Append.inst.op != Opcode::InvokeKernel ||
        Append.kernelKind != KernelEntry::Kind::ListPrimitive ||
        Append.inst.c >= Kernels.size() ||
        Kernels[Append.inst.c].op != "list_insert" || Append.regs.size() != 2)
      continue;
    uint32_t List = Append.regs[0], X = Append.regs[1];
    const std::vector<uint32_t> &XDefs = DefsOf(X);
    if (XDefs.size() != 1 || XDefs[0] >= J)
      continue;
    PendingInst &Alloc = F.code[XDefs[0]];
    if (Alloc.deleted || Alloc.inst.op != Opcode::AllocTensorReg ||
        Alloc.inst.a != kNoStorage || Alloc.inst.d != (uint32_t)Device::CPU)
      continue;
    bool ListReady = List < F.numParams || !DefsOf(List).empty();
    for (uint32_t D : DefsOf(List))
      ListReady &= D < XDefs[0];
    if (!ListReady)
      continue;
    Alloc.inst =
        Instruction::allocListTensor(X, List, Alloc.inst.b, Alloc.inst.c);
  }
}

} // namespace rivet::vm::compiler
