//===- Verifier.h - The one structural check of an executable ---*- C++ -*-===//
//
// Checks everything the VM's interpreter loop indexes without checks: every
// operand of every instruction against its kind (Opcodes.def) and the
// executable's tables, the arities of calls and constructors, jump targets,
// the end of every function, and the native kernels' signatures. Run once
// when an executable is loaded and once after compilation (both through
// Executable::resolve()); docs/bytecode.md lists the rules.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rivet::vm {

class Executable;

/// Throws rivet::Error naming the function, instruction and rule broken.
void verifyExecutable(const Executable &Exe);

} // namespace rivet::vm
