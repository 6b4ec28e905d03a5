//===- GlobalStateGuards.cpp - Guards on torch's global state -------------===//
#include "frontend/capture/GlobalStateGuards.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyRef.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace dync::capture {

using python::PyRef;

namespace {

/// Whether this thread flushes denormals to zero. Python has no getter for
/// what torch.set_flush_denormal sets; it is this thread's floating-point
/// control register, which the runtime reads the same way.
bool flushesDenormals() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & 0x8040u) != 0; // flush-to-zero, denormals-are-zero
#elif defined(__aarch64__)
  uint64_t fpcr = 0;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  return (fpcr & (uint64_t(1) << 24)) != 0; // FZ
#else
  return false;
#endif
}

/// The int or bool torch.\p module.\p name() returns.
llvm::Expected<int64_t> callForInt(PyObject* torch, const char* module, const char* name) {
  PyRef owner = PyRef::borrow(torch);
  if (module) {
    owner = PyRef::steal(PyObject_GetAttrString(torch, module));
    if (!owner)
      return pythonError(llvm::Twine("reading torch.") + module);
  }
  PyRef value = PyRef::steal(PyObject_CallMethod(owner.get(), name, nullptr));
  if (!value)
    return pythonError(llvm::Twine("calling torch's ") + name + "()");
  int64_t result = PyLong_AsLongLong(value.get());
  if (result == -1 && PyErr_Occurred())
    return pythonError(llvm::Twine("reading what torch's ") + name + "() returned");
  return result;
}

} // namespace

llvm::Expected<std::vector<ir::Guard>> readGlobalStateGuards(PyObject* torch) {
  using ir::GlobalState;
  llvm::Expected<int64_t> deterministic =
      callForInt(torch, nullptr, "are_deterministic_algorithms_enabled");
  if (!deterministic)
    return deterministic.takeError();
  llvm::Expected<int64_t> warnOnly =
      callForInt(torch, nullptr, "is_deterministic_algorithms_warn_only_enabled");
  if (!warnOnly)
    return warnOnly.takeError();
  llvm::Expected<int64_t> functionModes = callForInt(torch, "_C", "_len_torch_function_stack");
  if (!functionModes)
    return functionModes.takeError();
  llvm::Expected<int64_t> dispatchModes = callForInt(torch, "_C", "_len_torch_dispatch_stack");
  if (!dispatchModes)
    return dispatchModes.takeError();
  if (*functionModes || *dispatchModes)
    return captureError(
        llvm::Twine(*functionModes ? "a torch function mode" : "a torch dispatch mode") +
        " is active when capture starts (torch.set_default_device, or a mode entered at "
        "import): capture does not run modes yet, so its graph would not be what eager "
        "computes");

  std::vector<ir::Guard> guards;
  guards.push_back(ir::Guard::globalState(GlobalState::DeterministicAlgorithms,
                                          *deterministic ? (*warnOnly ? 2 : 1) : 0));
  guards.push_back(ir::Guard::globalState(GlobalState::FlushDenormal, flushesDenormals()));
  guards.push_back(ir::Guard::globalState(GlobalState::TorchFunctionModes, 0));
  guards.push_back(ir::Guard::globalState(GlobalState::TorchDispatchModes, 0));
  // Switches that pick eager's CPU kernels (and so its rounding) or fill
  // what factories leave uninitialized: read from torch's own getters, the
  // ones the runtime's at::Context reads answer.
  struct Switch {
    GlobalState state;
    const char* getter;
  };
  for (Switch item :
       {Switch{GlobalState::DeterministicFill, "_get_deterministic_fill_uninitialized_memory"},
        Switch{GlobalState::Mkldnn, "_get_mkldnn_enabled"},
        Switch{GlobalState::MkldnnDeterministic, "_get_mkldnn_deterministic"},
        Switch{GlobalState::Nnpack, "_get_nnpack_enabled"},
        Switch{GlobalState::CpuFp16Reduction, "_get_cpu_allow_fp16_reduced_precision_reduction"}}) {
    llvm::Expected<int64_t> value = callForInt(torch, "_C", item.getter);
    if (!value)
      return value.takeError();
    guards.push_back(ir::Guard::globalState(item.state, *value ? 1 : 0));
  }
  return guards;
}

} // namespace dync::capture
