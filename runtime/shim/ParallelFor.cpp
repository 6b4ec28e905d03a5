//===- ParallelFor.cpp - Kernel slices on torch's intra-op threads --------===//
//
// at::parallel_for is a header template: which thread pool it uses is
// decided where it is compiled. libtorch's CPU wheel is built for OpenMP
// (AT_PARALLEL_OPENMP), and without -fopenmp the template's
// `#pragma omp parallel` is silently dropped, so every slice would run on
// the calling thread whatever torch.set_num_threads says. This file alone is
// compiled with -fopenmp, and the runtime links the libgomp torch ships, so
// one OpenMP runtime (torch's, with its thread count) serves ATen's own
// kernels and dync's.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <ATen/Parallel.h>

#include <exception>

#ifndef _OPENMP
#error "ParallelFor.cpp must be compiled with OpenMP, as libtorch's at::parallel_for expects"
#endif

using namespace dync::shim;

dync_status dync_parallel_for(int64_t begin, int64_t end, int64_t grain, dync_parallel_fn fn,
                              void* ctx) {
  if (!fn)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_parallel_for: NULL function");
  if (begin >= end)
    return DYNC_OK;
  try {
    at::parallel_for(begin, end, grain, [&](int64_t b, int64_t e) { fn(ctx, b, e); });
  } catch (const std::exception& error) {
    return fail(DYNC_ERR_INTERNAL, error.what());
  }
  return DYNC_OK;
}
