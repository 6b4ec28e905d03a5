//===- Recorder.cpp - Checkpoints of capture's state ----------------------===//
#include "frontend/capture/Recorder.h"

#include "ir/Graph.h"
#include "ir/Guard.h"

#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <unordered_set>

namespace dync::capture {

char IrreversibleEffect::ID = 0;

void IrreversibleEffect::log(llvm::raw_ostream& os) const {
  os << what_ << " cannot be taken back, so a speculated path may not do it";
}

ValueSnapshot ValueSnapshot::take(llvm::ArrayRef<ValuePtr> roots) {
  ValueSnapshot snapshot;
  std::unordered_set<const Value*> seen;
  std::vector<ValuePtr> work(roots.begin(), roots.end());
  auto visit = [&](const ValuePtr& value) {
    if (value)
      work.push_back(value);
  };
  while (!work.empty()) {
    ValuePtr value = std::move(work.back());
    work.pop_back();
    if (!value || !seen.insert(value.get()).second)
      continue;
    snapshot.saved_.emplace_back(value, *value);
    // Everything a value holds other values through.
    for (const ValuePtr& item : value->items)
      visit(item);
    for (const auto& [key, entry] : value->entries) {
      visit(key);
      visit(entry);
    }
    for (const ValuePtr& cell : value->closure)
      visit(cell);
    visit(value->iterable);
    visit(value->cell);
  }
  return snapshot;
}

ValuePtr ValueSnapshot::firstChanged() const {
  for (const auto& [value, old] : saved_) {
    const Value& now = *value;
    bool same = now.items == old.items && now.entries == old.entries &&
                now.iterable == old.iterable && now.position == old.position &&
                now.cell == old.cell && now.closure == old.closure &&
                now.contents == old.contents &&
                (now.attributeDict == old.attributeDict || !old.attributeDict);
    if (!same)
      return value;
  }
  return nullptr;
}

void ValueSnapshot::restore() const {
  for (const auto& [value, contents] : saved_)
    *value = contents;
}

void Recorder::trackGuards(ir::GuardSet& guards) {
  // The whole set is saved: a guard added since may have been dropped as a
  // repeat of one that was there, so the set is not only appended to.
  track([&guards]() -> Restore {
    auto saved = std::make_shared<ir::GuardSet>(guards);
    return [&guards, saved] { guards = *saved; };
  });
}

void Recorder::trackGraph(ir::Graph& graph) {
  track([&graph]() -> Restore {
    ir::Node* last = graph.nodes().empty() ? nullptr : &graph.nodes().back();
    return [&graph, last] {
      while (!graph.nodes().empty() && &graph.nodes().back() != last)
        graph.erase(&graph.nodes().back());
    };
  });
}

void Recorder::trackValues(std::function<void(std::vector<ValuePtr>&)> roots) {
  track([roots = std::move(roots)]() -> Restore {
    std::vector<ValuePtr> found;
    roots(found);
    auto snapshot = std::make_shared<ValueSnapshot>(ValueSnapshot::take(found));
    return [snapshot] { snapshot->restore(); };
  });
}

Recorder::Checkpoint Recorder::checkpoint() {
  Open open;
  open.logSize = log_.size();
  open.restores.reserve(trackers_.size());
  for (const Tracker& tracker : trackers_)
    open.restores.push_back(tracker());
  open_.push_back(std::move(open));
  return Checkpoint{open_.size()};
}

void Recorder::rollback(Checkpoint cp) {
  assert(cp.depth >= 1 && cp.depth <= open_.size() && "rolling back a checkpoint that ended");
  Open& open = open_[cp.depth - 1];
  // Logged effects first, newest first: they happened after every
  // tracker's save, so undoing them returns to the state the trackers saw.
  while (log_.size() > open.logSize) {
    std::function<void()> undo = std::move(log_.back());
    log_.pop_back();
    undo();
  }
  for (auto it = open.restores.rbegin(); it != open.restores.rend(); ++it)
    (*it)();
  open_.resize(cp.depth - 1);
}

void Recorder::commit(Checkpoint cp) {
  assert(cp.depth >= 1 && cp.depth <= open_.size() && "committing a checkpoint that ended");
  open_.resize(cp.depth - 1);
  // Outside every checkpoint nothing can be taken back any more.
  if (open_.empty())
    log_.clear();
}

void Recorder::onRollback(std::function<void()> undo) {
  if (speculating())
    log_.push_back(std::move(undo));
}

llvm::Error Recorder::irreversible(const llvm::Twine& what) {
  if (!speculating())
    return llvm::Error::success();
  ++refusals_;
  return llvm::make_error<IrreversibleEffect>(what.str());
}

} // namespace dync::capture
