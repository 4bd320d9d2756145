//===- PlaceListElements.h - Tensors made to be appended to a List -*- C++
//-*-===//
#pragma once

#include "vm/Executable.h"
#include "vm/compiler/LoweredFunction.h"

#include <vector>

namespace rivet::vm::compiler {

/// Makes each host tensor of dynamic shape that F appends to a List
/// (list_insert without a position) in the List's arena: its
/// AllocTensorReg in fresh storage becomes AllocListTensor of that List, so
/// that what a loop appends lies in order and a join of it is a view.
/// Kernels: the executable's kernel table, which F's calls index.
void placeListElements(LoweredFunction &F,
                       const std::vector<KernelEntry> &Kernels);

} // namespace rivet::vm::compiler
