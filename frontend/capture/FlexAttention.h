//===- FlexAttention.h - flex_attention's entry points, refused by name ---===//
//
// torch.nn.attention.flex_attention runs a program's score_mod and mask_mod
// under a torch function mode (indexing by 0-d tensors) and, for the
// attention itself, through torch.compile of a higher-order operator:
// neither has a form in capture. Inlined, they stop inside torch at the
// first construct capture lacks (the mode object, then the compile), far
// from the program's line; capture refuses them where the program calls
// them, naming the function and what to write instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

#include <optional>
#include <string>

namespace dync::capture {

/// `torch.nn.attention.flex_attention.NAME` when \p function is one of the
/// functions that run a score_mod or mask_mod (flex_attention,
/// create_block_mask, create_mask; by identity), else none.
std::optional<std::string> flexAttentionFunctionName(PyObject* function);

} // namespace dync::capture
