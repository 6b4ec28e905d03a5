//===- GeneratorOps.cpp - Operators on the default CPU generator's state --===//
//
// A graph that reseeds, saves or restores torch's default CPU generator
// between its random draws (torch.manual_seed, torch.get_rng_state,
// torch.set_rng_state inside the captured function) holds those steps as
// calls of these operators, at their place among the draws. ATen has none,
// so the shim defines them in dync's namespace, in every process that loads
// an artifact; the compiler defines the same schemas for capture
// (frontend/oracle/embedded/oracle_generator.py). Each does what the Python
// function does on the CPU generator, under the generator's lock.
//
// A graph that may fall back to the original code after drawing saves the
// same state before its first draw and puts it back before falling back
// (dync_generator_state_save and _restore, through the shim's table), so
// the original code draws what eager would have drawn.
//
//===----------------------------------------------------------------------===//

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/op_registration/op_registration.h>
#include <torch/library.h>

#include "runtime/shim/ShimInternal.h"

#include <exception>
#include <mutex>
#include <new>

namespace {

void manualSeed(int64_t seed) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  // torch.manual_seed takes the seed as an unsigned 64-bit number; a
  // negative int wraps around as it does there.
  generator.set_current_seed(static_cast<uint64_t>(seed));
}

at::Tensor getRngState() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void setRngState(const at::Tensor& state) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

/// Runs \p body, turning an exception into a status and message: nothing may
/// unwind into the generated code that calls these.
template <typename Body> dync_status guardedCall(Body&& body) {
  try {
    return body();
  } catch (const c10::Error& e) {
    return dync::shim::fail(DYNC_ERR_ATEN, e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    return dync::shim::fail(DYNC_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return dync::shim::fail(DYNC_ERR_ATEN, e.what());
  } catch (...) {
    return dync::shim::fail(DYNC_ERR_INTERNAL, "unknown C++ exception");
  }
}

} // namespace

dync_status dync_generator_state_save(dync_tensor** out) {
  if (!out)
    return dync::shim::fail(DYNC_ERR_INVALID_ARGUMENT, "NULL out-parameter");
  *out = nullptr;
  return guardedCall([&] {
    *out = dync::shim::releaseToHandle(getRngState());
    return DYNC_OK;
  });
}

dync_status dync_generator_state_restore(const dync_tensor* state) {
  if (!state)
    return dync::shim::fail(DYNC_ERR_INVALID_ARGUMENT,
                            "no saved state of the random generator to put back");
  return guardedCall([&] {
    setRngState(dync::shim::toTensor(state));
    return DYNC_OK;
  });
}

TORCH_LIBRARY_FRAGMENT(dync, m) {
  // Tagged as torch tags its random operators: no pass may drop, merge or
  // move them.
  m.def("manual_seed(int seed) -> ()", {at::Tag::nondeterministic_seeded});
  m.def("get_rng_state() -> Tensor", {at::Tag::nondeterministic_seeded});
  m.def("set_rng_state(Tensor state) -> ()", {at::Tag::nondeterministic_seeded});
  m.impl("manual_seed",
         torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(manualSeed)));
  m.impl("get_rng_state",
         torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(getRngState)));
  m.impl("set_rng_state",
         torch::dispatch(c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(setRngState)));
}
