//===- AutogradGrad.h - torch.autograd.grad inside the function -*- C++ -*-===//
//
// Which call is torch.autograd.grad; Interpreter::callAutogradGrad captures
// it (AutogradGrad.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DYNC_FRONTEND_CAPTURE_AUTOGRADGRAD_H
#define DYNC_FRONTEND_CAPTURE_AUTOGRADGRAD_H

#include "frontend/capture/Value.h"

namespace dync::capture {

/// Whether \p function is torch.autograd.grad.
bool isAutogradGrad(const Value& function);

} // namespace dync::capture

#endif
