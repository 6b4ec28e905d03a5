//===- GlobalState.cpp - Torch's global state that guards compare --------===//
//
// The items of process- and thread-wide state a `global_state` guard reads
// on every call: each changes what the same ATen calls compute (or whether
// they reach ATen at all), and none is visible in the call's arguments.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/dync_shim.h"

#include <ATen/Context.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace {

/// Whether the calling thread flushes denormal results and inputs to zero:
/// what torch.set_flush_denormal sets, on the thread that called it.
bool flushesDenormals() {
#if defined(__x86_64__) || defined(__i386__)
  // MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits.
  return (_mm_getcsr() & 0x8040u) != 0;
#elif defined(__aarch64__)
  uint64_t fpcr = 0;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  return (fpcr & (uint64_t(1) << 24)) != 0; // FZ
#else
  return false;
#endif
}

/// oneDNN's float32 precision for \p op as torch resolves it (the op's own
/// setting, else oneDNN's, else the generic one): 1 ieee, 2 tf32, 3 bf16.
/// An unset chain means full precision, so it reads as ieee.
int64_t oneDnnFloat32Precision(at::Float32Op op) {
  switch (at::globalContext().float32Precision(at::Float32Backend::MKLDNN, op)) {
  case at::Float32Precision::TF32:
    return 2;
  case at::Float32Precision::BF16:
    return 3;
  default:
    return 1;
  }
}

} // namespace

int64_t dync_global_state_of(int which) {
  switch (which) {
  case DYNC_GLOBAL_DETERMINISTIC_ALGORITHMS: {
    const at::Context& context = at::globalContext();
    if (!context.deterministicAlgorithms())
      return 0;
    return context.deterministicAlgorithmsWarnOnly() ? 2 : 1;
  }
  case DYNC_GLOBAL_FLUSH_DENORMAL:
    return flushesDenormals() ? 1 : 0;
  case DYNC_GLOBAL_TORCH_FUNCTION_MODES:
    return at::impl::PythonTorchFunctionTLS::stack_len();
  case DYNC_GLOBAL_TORCH_DISPATCH_MODES:
    return c10::impl::TorchDispatchModeTLS::stack_len();
  // Switches that pick which CPU kernels eager runs (and so its rounding),
  // or what a factory's memory holds.
  case DYNC_GLOBAL_DETERMINISTIC_FILL:
    return at::globalContext().deterministicFillUninitializedMemory() ? 1 : 0;
  case DYNC_GLOBAL_MKLDNN:
    return at::globalContext().userEnabledMkldnn() ? 1 : 0;
  case DYNC_GLOBAL_MKLDNN_DETERMINISTIC:
    return at::globalContext().deterministicMkldnn() ? 1 : 0;
  case DYNC_GLOBAL_NNPACK:
    return at::globalContext().userEnabledNNPACK() ? 1 : 0;
  case DYNC_GLOBAL_CPU_FP16_REDUCTION:
    return at::globalContext().allowFP16ReductionCPU() ? 1 : 0;
  // What precision float32 matmuls, convolutions and RNNs may compute in,
  // and which scaled_dot_product_attention kernel runs on CPU.
  case DYNC_GLOBAL_FP32_PRECISION_MATMUL:
    return oneDnnFloat32Precision(at::Float32Op::MATMUL);
  case DYNC_GLOBAL_FP32_PRECISION_CONV:
    return oneDnnFloat32Precision(at::Float32Op::CONV);
  case DYNC_GLOBAL_FP32_PRECISION_RNN:
    return oneDnnFloat32Precision(at::Float32Op::RNN);
  case DYNC_GLOBAL_FLASH_SDP:
    return at::globalContext().userEnabledFlashSDP() ? 1 : 0;
  case DYNC_GLOBAL_MATH_SDP:
    return at::globalContext().userEnabledMathSDP() ? 1 : 0;
  case DYNC_GLOBAL_MATH_SDP_REDUCTION:
    return at::globalContext().allowFP16BF16ReductionMathSDP() ? 1 : 0;
  default:
    return -1;
  }
}
