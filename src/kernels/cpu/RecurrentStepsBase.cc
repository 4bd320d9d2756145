//===- RecurrentStepsBase.cc - RecurrentSteps.inc for baseline ------------===//
#include "kernels/cpu/RecurrentSteps.h"

#if defined(__GNUC__) // and clang
// Vector arguments of always-inlined helpers: no call passes one.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define RIVET_RECURRENT_ENTRY runDirectionBase
#include "kernels/cpu/RecurrentSteps.inc"
