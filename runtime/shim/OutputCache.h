//===- OutputCache.h - Reused memory for large graph-made tensors ---------===//
//
// A fresh tensor of tens of megabytes costs more than the kernel that fills
// it: glibc maps such blocks anew on every allocation (above its mmap
// threshold, at most 32 MiB) and the OS then takes a page fault per 4 KiB
// page on first touch. A softmax over 32 MB spends two thirds of its time
// there. Large tensors made for graph functions (kernel outputs, returned or
// not) therefore come from this allocator: a block given back when its last
// tensor dies is kept, up to a byte budget, and handed to the next
// allocation of its size class with its pages already mapped.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_SHIM_OUTPUTCACHE_H
#define DYNC_RUNTIME_SHIM_OUTPUTCACHE_H

#include "runtime/shim/dync_shim.h"

#include <c10/core/Allocator.h>

#include <cstddef>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace dync::shim {

/// Blocks below this size come from ATen's CPU allocator as usual: glibc
/// keeps them in its heap, already mapped.
inline constexpr size_t OutputCacheMinBytes = size_t(1) << 20;

/// An allocator that keeps freed blocks, newest last, while their bytes
/// stay within the budget, and evicts the oldest beyond it. Thread-safe:
/// tensors die on any thread.
class DYNC_SHIM_EXPORT OutputCache final : public c10::Allocator {
public:
  explicit OutputCache(size_t budgetBytes) : budget_(budgetBytes) {}
  /// Gives every kept block back to the system. Live blocks must have been
  /// given back first.
  ~OutputCache() override;

  c10::DataPtr allocate(size_t bytes) override;
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  /// Bytes kept while no tensor uses them.
  size_t bytesKept();

private:
  /// The deleter of every block this allocator hands out; the block's
  /// DataPtr context is a Block naming the cache.
  static void giveBack(void* context);
  void keep(void* data, size_t size);

  std::mutex mutex_;
  const size_t budget_;
  size_t kept_ = 0;
  std::deque<std::pair<size_t, void*>> free_; // oldest first
};

/// The process's cache for large graph-made tensors, or null when its
/// budget is 0. The budget is $DYNC_OUTPUT_CACHE_MB megabytes, 256 when the
/// variable is unset, read on first use; the cache lives until the process
/// ends, so tensors that outlive everything else can still give blocks back.
DYNC_SHIM_EXPORT OutputCache* processOutputCache();

} // namespace dync::shim

#endif // DYNC_RUNTIME_SHIM_OUTPUTCACHE_H
