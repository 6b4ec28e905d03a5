//===- LibraryAdvice.cpp - What to do when capture stops inside torch -----===//
#include "compiler/LibraryAdvice.h"

#include "llvm/ADT/StringRef.h"

namespace dync::compiler {

using capture::CaptureError;
using capture::CaptureFrame;

namespace {

/// A refusal that arises in torch's code at a spot the caller decides: the
/// torch function (its file under torch/ and qualified name; an empty name
/// matches any function of the file), a fragment of the reason that says
/// which refusal it is, and what the caller can do.
struct TorchSpot {
  llvm::StringRef file;
  llvm::StringRef function;
  llvm::StringRef reason;
  llvm::StringRef advice;
};

// The outermost matching frame wins: it is the torch function the program
// called, whose arguments the advice names (nn.Transformer.forward passes
// tgt_is_causal on to TransformerDecoder.forward).
constexpr TorchSpot kSpots[] = {
    {"nn/modules/transformer.py", "Transformer.forward", "computed from tensor data",
     "torch's nn.Transformer, given a float src_mask or tgt_mask and no src_is_causal or "
     "tgt_is_causal, compares the mask's values with a causal mask's "
     "(_detect_is_causal_mask) and its attention branches on the answer: pass "
     "tgt_is_causal=True (src_is_causal=True) with a causal mask, or False with any other, "
     "which decides it without reading the mask"},
    {"nn/modules/transformer.py", "TransformerDecoder.forward", "computed from tensor data",
     "torch's nn.TransformerDecoder, given a float tgt_mask and no tgt_is_causal, compares "
     "the mask's values with a causal mask's (_detect_is_causal_mask) and its attention "
     "branches on the answer: pass tgt_is_causal=True with a causal mask, or False with any "
     "other, which decides it without reading the mask"},
    {"nn/modules/transformer.py", "TransformerEncoder.forward", "computed from tensor data",
     "torch's nn.TransformerEncoder, given a float mask and no is_causal, compares the "
     "mask's values with a causal mask's (_detect_is_causal_mask) and its attention "
     "branches on the answer: pass is_causal=True with a causal mask, or False with any "
     "other, which decides it without reading the mask"},
    {"nn/modules/transformer.py", "TransformerEncoder.forward", "_nested_tensor_from_mask",
     "torch's nn.TransformerEncoder, in eval mode without grad and given a "
     "src_key_padding_mask, packs the input into a nested tensor by the mask's values (its "
     "inference fast path), which capture cannot follow: construct it with "
     "enable_nested_tensor=False, which keeps the padded input and the mask (the output's "
     "padded steps then hold values where the nested path's hold zeros)"},
    {"ao/nn/quantized/dynamic/", "", "ScriptObject",
     "a module quantize_dynamic swapped in keeps its int8 weights packed in a TorchScript "
     "object: export the float model (before torch.ao.quantization.quantize_dynamic), or keep "
     "int8 weights and their scales as buffers and dequantize them in forward "
     "(weight.float() * scale)"},
    {"nn/utils/rnn.py", "pack_padded_sequence", "_pack_padded_sequence",
     "call the RNN on the padded tensor itself: for a one-directional RNN, each sequence's "
     "outputs up to its length are the packed call's; zero the steps past its length with a "
     "mask (torch.arange(T) < lengths[:, None], batch first) and read its last state from "
     "the output at lengths - 1 (gather). A bidirectional RNN's backward direction would "
     "start in the padding and differ: call that one outside the exported function"},
};

/// Whether \p file is \p fragment under an installed torch
/// (`.../site-packages/torch/FRAGMENT...`, or dist-packages).
bool inTorch(llvm::StringRef file, llvm::StringRef fragment) {
  constexpr llvm::StringRef kTorch = "-packages/torch/";
  size_t at = file.find(kTorch);
  return at != llvm::StringRef::npos && file.substr(at + kTorch.size()).starts_with(fragment);
}

} // namespace

std::string libraryAdvice(const CaptureError& error) {
  const std::vector<CaptureFrame>& stack = error.stack();
  // Only a refusal in torch's own lines: one in the program's code called
  // from torch (a layer of its own inside nn.TransformerEncoder) is the
  // program's to change.
  if (stack.empty() || !inTorch(stack.front().location.file, ""))
    return {};
  for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame)
    for (const TorchSpot& spot : kSpots)
      if (inTorch(frame->location.file, spot.file) &&
          (spot.function.empty() || frame->function == spot.function) &&
          llvm::StringRef(error.reason()).contains(spot.reason))
        return spot.advice.str();
  return {};
}

} // namespace dync::compiler
