//===- OpTraits.h - What torch's registry says about an overload -*- C++ -*-===//
//
// Passes decide whether a node may be removed, merged with an equal one or
// fused into a loop from facts torch already records about every operator
// overload: its schema's alias annotations and its tags. The table is
// generated at build time from the installed torch (gen-op-traits.py), so
// no pass keeps its own list of operator names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace dync::ir {

/// An argument of a random operator whose value at a call switches its
/// draws off: a `dropout_p`/`dropout` float at 0, a `train`/`training`
/// bool at False (ir/draw_switches.py states the rule, which capture applies
/// too).
struct DrawSwitch {
  /// The argument's position in the schema; -1 for none.
  int8_t position = -1;
  /// Its name, as a keyword argument gives it.
  const char* name = "";
  /// A `train`/`training` bool (off at False), else a dropout float (off
  /// at 0).
  bool training = false;
  /// Whether the schema's default value switches the draws off.
  bool offByDefault = false;
};

struct OpTraits {
  /// The schema writes one of its arguments (`Tensor(a!)`): in-place and
  /// out= overloads.
  bool mutatesArgument = false;
  /// Some result shares storage with an argument: views (`Tensor(a)`),
  /// and the written argument that in-place and out= overloads return
  /// (`Tensor(a!)`).
  bool returnsAlias = false;
  /// Tagged nondeterministic_seeded: draws from the random generator, so
  /// two equal calls are not the same value and a dead one still advances
  /// the generator.
  bool randomSeeded = false;
  /// Tagged pointwise: each output element depends only on the elements at
  /// the same (broadcast) index of the tensor arguments.
  bool pointwise = false;
  /// Tagged reduction.
  bool reduction = false;
  /// Tagged dynamic_output_shape or data_dependent_output.
  bool dataDependent = false;
  /// Tagged core: a member of the core ATen operator set.
  bool core = false;
  /// Listed by torch.fx as side-effectful (`aten::_assert_scalar`,
  /// `aten::sym_constrain_range`, ...): a check or effect that must run even
  /// though nothing uses its result.
  bool sideEffect = false;
  /// An in-place overload (`aten::add_.Tensor`) that writes and returns its
  /// first argument only, and whose out-of-place twin, the same name without
  /// the trailing underscore (`aten::add.Tensor`), takes the same arguments
  /// and returns one fresh tensor.
  bool functionalTwin = false;
  /// For a random operator, the arguments that may switch its draws off
  /// at a call (ir/RandomDraws.h).
  DrawSwitch drawSwitches[2] = {};

  /// Free of effects a pass must keep: removable when unused and mergeable
  /// with an equal call.
  bool isPure() const { return !mutatesArgument && !randomSeeded && !sideEffect; }
};

/// The traits of \p overload (`aten::add.Tensor`, `aten::relu.default`), or
/// null for an overload torch did not register when dync was built.
const OpTraits* findOpTraits(llvm::StringRef overload);

} // namespace dync::ir
