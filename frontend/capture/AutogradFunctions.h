//===- AutogradFunctions.h - What the autograd.Function files share -*- C++ -*-===//
#pragma once

#include "frontend/capture/Value.h"

namespace dync::capture {

/// Whether \p value is a tensor that requires grad, or a tuple or list
/// holding one.
bool anyRequiresGrad(const ValuePtr& value);

} // namespace dync::capture
