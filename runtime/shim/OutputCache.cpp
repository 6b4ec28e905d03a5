//===- OutputCache.cpp - Reused memory for large graph-made tensors -------===//

#include "runtime/shim/OutputCache.h"

#include <c10/core/impl/alloc_cpu.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace dync::shim;

namespace {

/// Sizes are rounded up to this, so tensors of nearly the same size share
/// blocks.
constexpr size_t Granule = size_t(64) << 10;

size_t sizeClass(size_t bytes) { return (bytes + Granule - 1) / Granule * Granule; }

/// What a handed-out block's DataPtr carries to its deleter.
struct Block {
  OutputCache* cache;
  void* data;
  size_t size;
};

} // namespace

OutputCache::~OutputCache() {
  for (auto& [size, data] : free_)
    c10::free_cpu(data);
}

c10::DataPtr OutputCache::allocate(size_t bytes) {
  size_t size = sizeClass(bytes);
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The newest block of the class: the likeliest to be in cache.
    for (auto it = free_.rbegin(); it != free_.rend(); ++it)
      if (it->first == size) {
        data = it->second;
        free_.erase(std::next(it).base());
        kept_ -= size;
        break;
      }
  }
  if (!data)
    data = c10::alloc_cpu(size);
  auto* block = new Block{this, data, size};
  return {data, block, &OutputCache::giveBack, c10::Device(c10::DeviceType::CPU)};
}

void OutputCache::giveBack(void* context) {
  std::unique_ptr<Block> block(static_cast<Block*>(context));
  block->cache->keep(block->data, block->size);
}

void OutputCache::keep(void* data, size_t size) {
  std::vector<void*> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace_back(size, data);
    kept_ += size;
    while (kept_ > budget_) {
      kept_ -= free_.front().first;
      evicted.push_back(free_.front().second);
      free_.pop_front();
    }
  }
  for (void* old : evicted)
    c10::free_cpu(old);
}

size_t OutputCache::bytesKept() {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_;
}

OutputCache* dync::shim::processOutputCache() {
  static OutputCache* cache = []() -> OutputCache* {
    constexpr size_t defaultMegabytes = 256;
    size_t megabytes = defaultMegabytes;
    if (const char* text = std::getenv("DYNC_OUTPUT_CACHE_MB"); text && *text) {
      errno = 0;
      unsigned long long value = std::strtoull(text, nullptr, 10);
      // strtoull accepts a sign and wraps "-1" around; a budget is digits only.
      bool digitsOnly = std::strspn(text, "0123456789") == std::strlen(text);
      if (digitsOnly && errno == 0 && value <= (SIZE_MAX >> 20))
        megabytes = size_t(value);
      else
        // Said once per process, on the first large allocation: the variable
        // is read there, and a typo should not pass silently.
        std::fprintf(stderr,
                     "dync: DYNC_OUTPUT_CACHE_MB=%s is not a whole number of megabytes; the "
                     "output cache keeps its default of %zu\n",
                     text, defaultMegabytes);
    }
    // Never destroyed: tensors may die during exit, after static
    // destructors have run.
    return megabytes ? new OutputCache(megabytes << 20) : nullptr;
  }();
  return cache;
}
