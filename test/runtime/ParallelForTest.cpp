//===- ParallelForTest.cpp - Kernel slices run on torch's threads ---------===//

#include "runtime/shim/dync_shim.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

namespace {

struct Slices {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  int64_t covered = 0;
};

void record(void* ctx, int64_t begin, int64_t end) {
  auto* slices = static_cast<Slices*>(ctx);
  std::lock_guard<std::mutex> lock(slices->mutex);
  slices->threads.insert(std::this_thread::get_id());
  slices->covered += end - begin;
}

// With torch set to two threads, a range longer than the grain is split
// between two threads: the shim's parallel_for is torch's own, with its
// thread count, not a loop on the calling thread.
TEST(ParallelForTest, LongRangesUseTorchsThreads) {
  int previous = at::get_num_threads();
  at::set_num_threads(2);
  Slices slices;
  EXPECT_EQ(dync_parallel_for(0, 100000, 1000, &record, &slices), DYNC_OK);
  at::set_num_threads(previous);
  EXPECT_EQ(slices.covered, 100000);
  EXPECT_EQ(slices.threads.size(), 2u);
}

TEST(ParallelForTest, ShortRangesStayOnTheCallingThread) {
  int previous = at::get_num_threads();
  at::set_num_threads(2);
  Slices slices;
  EXPECT_EQ(dync_parallel_for(0, 500, 1000, &record, &slices), DYNC_OK);
  at::set_num_threads(previous);
  EXPECT_EQ(slices.covered, 500);
  ASSERT_EQ(slices.threads.size(), 1u);
  EXPECT_EQ(*slices.threads.begin(), std::this_thread::get_id());
}

} // namespace
