//===- Prelude.cc - The prelude: List, Option and list functions ----------===//
//
// The prelude is ordinary text in the .rvir format, parsed once (without
// importing itself) and merged into modules on demand.
//
//   type List[A] { Cons(A, List[A]), Nil }
//   type Option[A] { Some(A), None }
//   @map[A, B](%f: fn(A) -> B, %l: List[A]) -> List[B]
//       applies %f to every element (not tail recursive: depth = length).
//   @foldl[A, B](%f: fn(A, B) -> A, %init: A, %l: List[B]) -> A
//       left fold, tail recursive (constant stack in the interpreter).
//   @nth[A](%l: List[A], %i: Tensor[(), int64]) -> A
//       element %i (0-based). An index that is negative or >= the length
//       reaches the end of the list and fails with the run-time error
//       "match: no clause matched value Nil" (in @nth).
//   @length[A](%l: List[A]) -> Tensor[(), int64]
//       number of elements, tail recursive.
//   @concat(%l: List[Tensor[?, float32]]) -> Tensor[?, float32]
//       concatenate(l0, l1, ..., axis=0) of a non-empty list of float32
//       tensors (same rank, equal dims except axis 0); an empty list fails
//       with "match: no clause matched value Nil" (in @concat).
//   @rev[A](%l: List[A]) -> List[A]
//       the elements in reverse order, tail recursive.
//   @insert_at[A](%l: List[A], %i: Tensor[(), int64], %x: A) -> List[A]
//       %x inserted before element %i (0 <= %i <= length).
//   @erase_at[A](%l: List[A], %i: Tensor[(), int64]) -> List[A]
//       the list without element %i (0 <= %i < length).
//
//===----------------------------------------------------------------------===//
#include "ir/Module.h"
#include "ir/Parser.h"

namespace rivet::ir {

static const char *const PreludeText = R"rvir(
type List[A] {
  Cons(A, List[A]),
  Nil,
}

type Option[A] {
  Some(A),
  None,
}

def @map[A, B](%f: fn(A) -> B, %l: List[A]) -> List[B] {
  match (%l) {
    Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),
    Nil => Nil,
  }
}

def @foldl[A, B](%f: fn(A, B) -> A, %init: A, %l: List[B]) -> A {
  match (%l) {
    Cons(%h, %t) => @foldl(%f, %f(%init, %h), %t),
    Nil => %init,
  }
}

def @nth[A](%l: List[A], %i: Tensor[(), int64]) -> A {
  match (%l) {
    Cons(%h, %t) => if (equal(%i, 0i64)) { %h } else { @nth(%t, subtract(%i, 1i64)) },
  }
}

def @length[A](%l: List[A]) -> Tensor[(), int64] {
  let %count = fn (%rest: List[A], %n: Tensor[(), int64]) -> Tensor[(), int64] {
    match (%rest) {
      Cons(_, %t) => %count(%t, add(%n, 1i64)),
      Nil => %n,
    }
  };
  %count(%l, 0i64)
}

def @concat(%l: List[Tensor[?, float32]]) -> Tensor[?, float32] {
  match (%l) {
    Cons(%h, %t) => @foldl(fn (%acc: Tensor[?, float32], %x: Tensor[?, float32]) -> Tensor[?, float32] {
      concatenate(%acc, %x, axis=0)
    }, %h, %t),
  }
}

def @rev[A](%l: List[A]) -> List[A] {
  let %go = fn (%rest: List[A], %acc: List[A]) -> List[A] {
    match (%rest) {
      Cons(%h, %t) => %go(%t, Cons(%h, %acc)),
      Nil => %acc,
    }
  };
  %go(%l, Nil)
}

def @insert_at[A](%l: List[A], %i: Tensor[(), int64], %x: A) -> List[A] {
  if (equal(%i, 0i64)) {
    Cons(%x, %l)
  } else {
    match (%l) {
      Cons(%h, %t) => Cons(%h, @insert_at(%t, subtract(%i, 1i64), %x)),
    }
  }
}

def @erase_at[A](%l: List[A], %i: Tensor[(), int64]) -> List[A] {
  match (%l) {
    Cons(%h, %t) => if (equal(%i, 0i64)) { %t } else { Cons(%h, @erase_at(%t, subtract(%i, 1i64))) },
  }
}
)rvir";

static const Module &preludeModule() {
  static const Module Prelude =
      parseModule(PreludeText, "<prelude>", ParseOptions{false});
  return Prelude;
}

Module Module::withPrelude() { return preludeModule(); }

void Module::importPrelude() {
  const Module &P = preludeModule();
  for (const std::string &Name : P.typeDataNames())
    if (!findTypeData(Name))
      addTypeData(P.typeData(Name));
  for (const std::string &Name : P.functionNames())
    if (!hasFunction(Name))
      addFunction(Name, P.function(Name));
}

} // namespace rivet::ir
