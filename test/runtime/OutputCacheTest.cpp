//===- OutputCacheTest.cpp - Reuse of large graph-made tensors' memory ----===//

#include "runtime/shim/OutputCache.h"
#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace dync::shim;

namespace {

constexpr size_t MiB = size_t(1) << 20;

at::Tensor bytesFrom(OutputCache& cache, size_t bytes) {
  int64_t n = int64_t(bytes);
  return at::detail::empty_strided_generic(
      {n}, {1}, &cache, c10::DispatchKeySet(c10::DispatchKey::CPU), c10::ScalarType::Byte);
}

TEST(OutputCacheTest, AFreedBlockServesTheNextAllocationOfItsSize) {
  OutputCache cache(64 * MiB);
  at::Tensor first = bytesFrom(cache, 3 * MiB);
  void* data = first.data_ptr();
  std::memset(data, 7, 3 * MiB);
  EXPECT_EQ(cache.bytesKept(), 0u);
  first.reset();
  EXPECT_EQ(cache.bytesKept(), 3 * MiB);
  at::Tensor second = bytesFrom(cache, 3 * MiB);
  EXPECT_EQ(second.data_ptr(), data);
  EXPECT_EQ(cache.bytesKept(), 0u);
}

TEST(OutputCacheTest, LiveBlocksAreNeverShared) {
  OutputCache cache(64 * MiB);
  at::Tensor a = bytesFrom(cache, 2 * MiB);
  at::Tensor b = bytesFrom(cache, 2 * MiB);
  EXPECT_NE(a.data_ptr(), b.data_ptr());
  void* aData = a.data_ptr();
  a.reset();
  at::Tensor c = bytesFrom(cache, 2 * MiB);
  EXPECT_EQ(c.data_ptr(), aData);
  EXPECT_NE(c.data_ptr(), b.data_ptr());
}

TEST(OutputCacheTest, OtherSizeClassesGetTheirOwnBlocks) {
  OutputCache cache(64 * MiB);
  at::Tensor a = bytesFrom(cache, 2 * MiB);
  void* aData = a.data_ptr();
  a.reset();
  at::Tensor larger = bytesFrom(cache, 4 * MiB);
  EXPECT_NE(larger.data_ptr(), aData);
  EXPECT_EQ(cache.bytesKept(), 2 * MiB);
  // Sizes within one 64 KiB granule share a class.
  at::Tensor nearly = bytesFrom(cache, 2 * MiB - 100);
  EXPECT_EQ(nearly.data_ptr(), aData);
}

TEST(OutputCacheTest, TheOldestBlocksGoBeyondTheBudget) {
  OutputCache cache(5 * MiB);
  at::Tensor a = bytesFrom(cache, 2 * MiB);
  at::Tensor b = bytesFrom(cache, 2 * MiB);
  at::Tensor c = bytesFrom(cache, 2 * MiB);
  void* bData = b.data_ptr();
  void* cData = c.data_ptr();
  a.reset();
  b.reset();
  c.reset();
  // 6 MiB freed, 5 kept at most: a's block went back to the system.
  EXPECT_EQ(cache.bytesKept(), 4 * MiB);
  at::Tensor again1 = bytesFrom(cache, 2 * MiB);
  at::Tensor again2 = bytesFrom(cache, 2 * MiB);
  EXPECT_EQ(again1.data_ptr(), cData);
  EXPECT_EQ(again2.data_ptr(), bData);
}

TEST(OutputCacheTest, TensorsStayResizable) {
  OutputCache cache(64 * MiB);
  at::Tensor t = bytesFrom(cache, 2 * MiB);
  std::memset(t.data_ptr(), 3, 2 * MiB);
  // As eager's outputs: growing one moves it to a larger block of the same
  // allocator and gives the old one back.
  t.resize_({int64_t(4 * MiB)});
  EXPECT_EQ(t.storage().allocator(), &cache);
  EXPECT_EQ(static_cast<unsigned char*>(t.data_ptr())[2 * MiB - 1], 3);
  EXPECT_EQ(cache.bytesKept(), 2 * MiB);
}

TEST(OutputCacheTest, ShimAllocatesLargeTensorsFromTheProcessCache) {
  OutputCache* cache = processOutputCache();
  ASSERT_NE(cache, nullptr) << "DYNC_OUTPUT_CACHE_MB=0 in the test environment";
  int64_t large[] = {int64_t(OutputCacheMinBytes / sizeof(float)) + 1};
  int64_t small[] = {64};
  int64_t unit[] = {1};
  dync_tensor* handle = nullptr;
  ASSERT_EQ(dync_tensor_empty_strided(large, unit, 1, DYNC_DTYPE_FLOAT32, &handle), DYNC_OK);
  at::Tensor big = toTensor(handle);
  dync_tensor_release(handle);
  EXPECT_EQ(big.storage().allocator(), cache);
  EXPECT_EQ(big.sizes(), c10::IntArrayRef(large));
  ASSERT_EQ(dync_tensor_empty_strided(small, unit, 1, DYNC_DTYPE_FLOAT32, &handle), DYNC_OK);
  at::Tensor little = toTensor(handle);
  dync_tensor_release(handle);
  EXPECT_NE(little.storage().allocator(), cache);
}

} // namespace
