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

/// oneDNN's float32 precision for \p op as torch resolves it, numbered as
/// the `global_state` guard's value: 1 ieee, 2 tf32, 3 bf16. An unset
/// chain ("none") means full precision, so it counts as ieee, as the
/// runtime reads it.
llvm::Expected<int64_t> readFloat32Precision(PyObject* torch, const char* op) {
  PyRef module = PyRef::steal(PyObject_GetAttrString(torch, "_C"));
  if (!module)
    return pythonError("reading torch._C");
  PyRef value = PyRef::steal(
      PyObject_CallMethod(module.get(), "_get_fp32_precision_getter", "ss", "mkldnn", op));
  if (!value)
    return pythonError(llvm::Twine("reading oneDNN's float32 precision for ") + op);
  const char* word = PyUnicode_Check(value.get()) ? PyUnicode_AsUTF8(value.get()) : nullptr;
  if (!word)
    return pythonError(llvm::Twine("reading oneDNN's float32 precision for ") + op);
  llvm::StringRef precision(word);
  if (precision == "none" || precision == "ieee")
    return 1;
  if (precision == "tf32")
    return 2;
  if (precision == "bf16")
    return 3;
  return captureError(llvm::Twine("oneDNN's float32 precision for ") + op + " is '" + precision +
                      "', which capture does not know");
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
  // The precision oneDNN may compute float32 matmuls, convolutions and RNNs
  // in (bf16 under torch.set_float32_matmul_precision("medium")), as torch
  // resolves each op's setting through oneDNN's and the generic one.
  struct Precision {
    GlobalState state;
    const char* op;
  };
  for (Precision item : {Precision{GlobalState::Fp32PrecisionMatmul, "matmul"},
                         Precision{GlobalState::Fp32PrecisionConv, "conv"},
                         Precision{GlobalState::Fp32PrecisionRnn, "rnn"}}) {
    llvm::Expected<int64_t> value = readFloat32Precision(torch, item.op);
    if (!value)
      return value.takeError();
    guards.push_back(ir::Guard::globalState(item.state, *value));
  }
  // Which kernel scaled_dot_product_attention runs on CPU (the fused flash
  // kernel or the math one), and how the math kernel reduces half types.
  for (Switch item :
       {Switch{GlobalState::FlashSdp, "_get_flash_sdp_enabled"},
        Switch{GlobalState::MathSdp, "_get_math_sdp_enabled"},
        Switch{GlobalState::MathSdpReduction, "_get_math_sdp_allow_fp16_bf16_reduction"}}) {
    llvm::Expected<int64_t> value = callForInt(torch, "_C", item.getter);
    if (!value)
      return value.takeError();
    guards.push_back(ir::Guard::globalState(item.state, *value ? 1 : 0));
  }
  return guards;
}

} // namespace dync::capture
