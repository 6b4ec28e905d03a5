//===- Recorder.h - What capture did, and taking it back -------------------===//
//
// Capture changes state as it runs: guards are installed, the graph grows,
// symbolic values (lists, dicts, instances, cells, iterators) are mutated,
// frames move on, and the interpreter's own tables (context-variable
// settings, attributes of real objects, exceptions being handled) change.
// Speculating on a path that may be abandoned (one side of a data-dependent
// branch, later a graph break that restarts) needs all of it taken back.
//
// The recorder does that with checkpoints. State is registered once as a
// *tracker*: at each checkpoint the tracker saves what it guards and hands
// back how to restore it (the guard set, the graph's last node, the
// contents of every value reachable from the interpreter's roots). Effects
// that happen between a checkpoint and its end and are not covered by a
// tracker are logged as they happen, with how to undo them (onRollback).
// Effects that cannot be undone at all (a call of the tensor oracle, which
// changes torch's ShapeEnv; running the program's code for real) ask
// irreversible() first, which fails while a checkpoint is open, so a
// speculated path stops before doing them.
//
// rollback(cp) restores the state at cp exactly; commit(cp) keeps what
// happened since, and an enclosing checkpoint can still roll it back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace dync::ir {
class Graph;
class GuardSet;
} // namespace dync::ir

namespace dync::capture {

/// What irreversible() fails with: an effect a speculated path may not
/// have, because nothing could take it back.
class IrreversibleEffect : public llvm::ErrorInfo<IrreversibleEffect> {
public:
  static char ID;
  explicit IrreversibleEffect(std::string what) : what_(std::move(what)) {}
  const std::string& what() const { return what_; }
  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string what_;
};

/// The contents of a set of values and of every value they reach, as they
/// were when taken; restore() puts them back in place (the values keep
/// their identity, so everything that shares them sees the old contents).
class ValueSnapshot {
public:
  static ValueSnapshot take(llvm::ArrayRef<ValuePtr> roots);
  void restore() const;
  size_t size() const { return saved_.size(); }
  /// The first value whose contents differ from when the snapshot was taken
  /// (what it holds, where an iterator is), or null when none does. A
  /// `__dict__` made for an instance on its first read is no change.
  ValuePtr firstChanged() const;

private:
  std::vector<std::pair<ValuePtr, Value>> saved_;
};

class Recorder {
public:
  /// A point to return to, valid until it or an enclosing one is rolled
  /// back or committed. Checkpoints nest: the innermost ends first.
  struct Checkpoint {
    size_t depth = 0;
  };
  /// Restores what a tracker saved.
  using Restore = std::function<void()>;
  /// Saves one kind of state at a checkpoint.
  using Tracker = std::function<Restore()>;

  /// Registers state every checkpoint saves from now on.
  void track(Tracker tracker) { trackers_.push_back(std::move(tracker)); }
  /// The guards installed: a rollback returns the set to what it was.
  void trackGuards(ir::GuardSet& guards);
  /// The graph's nodes: a rollback erases those appended since. Only for
  /// nodes nothing outside the graph refers to (the oracle's calls are
  /// irreversible for that reason).
  void trackGraph(ir::Graph& graph);
  /// The values \p roots gives at the checkpoint and all they reach.
  void trackValues(std::function<void(std::vector<ValuePtr>&)> roots);

  Checkpoint checkpoint();
  /// Takes back everything since \p cp (and ends it and any checkpoint
  /// opened after it).
  void rollback(Checkpoint cp);
  /// Keeps everything since \p cp and ends it; an enclosing checkpoint
  /// still takes it back.
  void commit(Checkpoint cp);

  /// Whether a checkpoint is open: what happens may be taken back.
  bool speculating() const { return !open_.empty(); }
  size_t depth() const { return open_.size(); }

  /// Logs how to undo an effect that just happened, when a checkpoint is
  /// open (and does nothing otherwise).
  void onRollback(std::function<void()> undo);
  /// Succeeds outside checkpoints; inside one fails with an
  /// IrreversibleEffect naming \p what.
  llvm::Error irreversible(const llvm::Twine& what);
  /// How many times irreversible() failed: a speculated path that was
  /// refused an effect has failed, whatever error its caller made of it.
  size_t refusals() const { return refusals_; }

private:
  struct Open {
    std::vector<Restore> restores;
    size_t logSize = 0;
  };
  std::vector<Tracker> trackers_;
  std::vector<Open> open_;
  std::vector<std::function<void()>> log_;
  size_t refusals_ = 0;
};

} // namespace dync::capture
