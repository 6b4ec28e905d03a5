//===- RecorderTest.cpp - Checkpoints and rollbacks of capture's state ----===//
//
// What a rollback restores is compared with what the state was before the
// checkpoint, read back from the structures themselves: the guards, the
// graph's nodes and the contents of shared values.
//
//===----------------------------------------------------------------------===//
#include "PythonTestSupport.h"

#include "frontend/capture/Recorder.h"
#include "ir/GraphBuilder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dync::test {
namespace {

using namespace capture;
using ir::Guard;
using ir::Source;

/// The sources of the guards, in order, as text.
std::vector<std::string> guardSources(const ir::GuardSet& guards) {
  std::vector<std::string> sources;
  for (const Guard& guard : guards.guards())
    sources.push_back(guard.source ? guard.source->str() : "");
  return sources;
}

long long intOf(const ValuePtr& value) { return PyLong_AsLongLong(value->object.get()); }

TEST(Recorder, RollbackDropsGuardsAddedSince) {
  ir::GuardSet guards;
  Recorder recorder;
  recorder.trackGuards(guards);
  guards.add(Guard::none(Source::local("a")));
  Recorder::Checkpoint cp = recorder.checkpoint();
  guards.add(Guard::none(Source::local("b")));
  guards.add(Guard::none(Source::local("c")));
  ASSERT_EQ(guards.guards().size(), 3u);
  recorder.rollback(cp);
  EXPECT_EQ(guardSources(guards), std::vector<std::string>{"L['a']"});
  EXPECT_FALSE(recorder.speculating());
}

TEST(Recorder, CommitKeepsGuards) {
  ir::GuardSet guards;
  Recorder recorder;
  recorder.trackGuards(guards);
  Recorder::Checkpoint cp = recorder.checkpoint();
  guards.add(Guard::none(Source::local("b")));
  recorder.commit(cp);
  EXPECT_EQ(guardSources(guards), std::vector<std::string>{"L['b']"});
  EXPECT_FALSE(recorder.speculating());
}

TEST(Recorder, RollbackErasesNodesAppendedSince) {
  ir::Context ctx;
  ir::Graph graph(ctx, "f");
  ir::GraphBuilder builder(graph);
  Recorder recorder;
  recorder.trackGraph(graph);
  ir::Type scalar = ir::Type::contiguousTensor(ctx, ir::DType::F32, {});
  builder.addInput("x", scalar, "L['x']");
  Recorder::Checkpoint cp = recorder.checkpoint();
  builder.addInput("y", scalar, "L['y']");
  builder.addInput("z", scalar, "L['z']");
  ASSERT_EQ(graph.nodes().size(), 3u);
  recorder.rollback(cp);
  ASSERT_EQ(graph.nodes().size(), 1u);
  EXPECT_EQ(graph.nodes().front().source(), "L['x']");

  // From an empty graph too.
  ir::Graph empty(ctx, "g");
  ir::GraphBuilder emptyBuilder(empty);
  Recorder fresh;
  fresh.trackGraph(empty);
  Recorder::Checkpoint start = fresh.checkpoint();
  emptyBuilder.addInput("x", scalar, "L['x']");
  fresh.rollback(start);
  EXPECT_TRUE(empty.nodes().empty());
}

TEST(Recorder, RollbackRestoresSharedValuesInPlace) {
  ValuePtr list = makeList({makeInt(1)});
  ValuePtr inner = makeList({});
  ValuePtr dict = makeValue(ValueKind::Dict);
  dict->entries.push_back({makeInt(0), inner});
  ValuePtr cell = makeCell(makeInt(7));
  ValuePtr iterator = makeIterator(list);
  // Only `dict` is a root: `inner` is reached through it.
  std::vector<ValuePtr> roots = {list, dict, cell, iterator};
  Recorder recorder;
  recorder.trackValues(
      [&](std::vector<ValuePtr>& found) { found.insert(found.end(), roots.begin(), roots.end()); });

  Recorder::Checkpoint cp = recorder.checkpoint();
  list->items.push_back(makeInt(2));
  list->items[0] = makeInt(9);
  inner->items.push_back(makeInt(3));
  dict->entries.push_back({makeInt(1), makeNone()});
  cell->cell = makeInt(8);
  iterator->position = 1;
  ValuePtr aliasOfInner = dict->entries[0].second;
  recorder.rollback(cp);

  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(intOf(list->items[0]), 1);
  EXPECT_TRUE(inner->items.empty());
  // The value keeps its identity: whoever shared it sees the old contents.
  EXPECT_EQ(aliasOfInner.get(), inner.get());
  EXPECT_TRUE(aliasOfInner->items.empty());
  EXPECT_EQ(dict->entries.size(), 1u);
  EXPECT_EQ(intOf(cell->cell), 7);
  EXPECT_EQ(iterator->position, 0u);
}

TEST(Recorder, NestedCheckpoints) {
  ir::GuardSet guards;
  ValuePtr list = makeList({});
  Recorder recorder;
  recorder.trackGuards(guards);
  recorder.trackValues([&](std::vector<ValuePtr>& found) { found.push_back(list); });
  std::vector<int> undone;

  Recorder::Checkpoint outer = recorder.checkpoint();
  guards.add(Guard::none(Source::local("a")));
  list->items.push_back(makeInt(1));
  recorder.onRollback([&] { undone.push_back(1); });

  // An inner checkpoint rolled back returns to the outer path's state.
  Recorder::Checkpoint inner = recorder.checkpoint();
  EXPECT_EQ(recorder.depth(), 2u);
  guards.add(Guard::none(Source::local("b")));
  list->items.push_back(makeInt(2));
  recorder.onRollback([&] { undone.push_back(2); });
  recorder.rollback(inner);
  EXPECT_EQ(guardSources(guards), std::vector<std::string>{"L['a']"});
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(undone, std::vector<int>{2});

  // An inner checkpoint committed is still taken back by the outer one,
  // its logged effects newest first.
  Recorder::Checkpoint kept = recorder.checkpoint();
  guards.add(Guard::none(Source::local("c")));
  list->items.push_back(makeInt(3));
  recorder.onRollback([&] { undone.push_back(3); });
  recorder.commit(kept);
  EXPECT_EQ(guards.guards().size(), 2u);
  EXPECT_EQ(list->items.size(), 2u);
  EXPECT_TRUE(recorder.speculating());
  recorder.rollback(outer);
  EXPECT_TRUE(guards.empty());
  EXPECT_TRUE(list->items.empty());
  EXPECT_EQ(undone, (std::vector<int>{2, 3, 1}));
  EXPECT_FALSE(recorder.speculating());
}

TEST(Recorder, RollingBackAnOuterCheckpointEndsInnerOnes) {
  ir::GuardSet guards;
  Recorder recorder;
  recorder.trackGuards(guards);
  Recorder::Checkpoint outer = recorder.checkpoint();
  guards.add(Guard::none(Source::local("a")));
  recorder.checkpoint();
  guards.add(Guard::none(Source::local("b")));
  recorder.rollback(outer);
  EXPECT_TRUE(guards.empty());
  EXPECT_EQ(recorder.depth(), 0u);
}

TEST(Recorder, EffectsOutsideCheckpointsAreNotLogged) {
  Recorder recorder;
  int undone = 0;
  recorder.onRollback([&] { ++undone; });
  Recorder::Checkpoint cp = recorder.checkpoint();
  recorder.rollback(cp);
  EXPECT_EQ(undone, 0);

  // Committing the outermost checkpoint forgets its log.
  Recorder::Checkpoint first = recorder.checkpoint();
  recorder.onRollback([&] { ++undone; });
  recorder.commit(first);
  Recorder::Checkpoint second = recorder.checkpoint();
  recorder.rollback(second);
  EXPECT_EQ(undone, 0);
}

TEST(Recorder, IrreversibleFailsOnlyWhileSpeculating) {
  Recorder recorder;
  EXPECT_FALSE(static_cast<bool>(recorder.irreversible("a call of the tensor oracle")));
  Recorder::Checkpoint cp = recorder.checkpoint();
  llvm::Error error = recorder.irreversible("a call of the tensor oracle");
  ASSERT_TRUE(error.isA<IrreversibleEffect>());
  EXPECT_EQ(recorder.refusals(), 1u);
  EXPECT_EQ(llvm::toString(std::move(error)),
            "a call of the tensor oracle cannot be taken back, so a speculated path may not do it");
  recorder.commit(cp);
  EXPECT_FALSE(static_cast<bool>(recorder.irreversible("a call of the tensor oracle")));
}

} // namespace
} // namespace dync::test
