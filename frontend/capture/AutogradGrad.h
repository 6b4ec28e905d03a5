//===- AutogradGrad.h - torch.autograd.grad inside the function -*- C++ -*-===//
//
// Which call is torch.autograd.grad; Interpreter::callAutogradGrad captures
// it (AutogradGrad.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DYNC_FRONTEND_CAPTURE_AUTOGRADGRAD_H
#define DYNC_FRONTEND_CAPTURE_AUTOGRADGRAD_H

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dync::capture {

/// Whether \p function is torch.autograd.grad.
bool isAutogradGrad(const Value& function);

/// The name of an autograd node (`SigmoidBackward0`) in the history of the
/// fake \p tensor whose saved tensors torch.autograd.grad freed (called
/// without retain_graph), or "" when there is none. Eager's backward
/// through that node raises; the graph's, whose autograd saved them again
/// when it ran, would not.
llvm::Expected<std::string> freedHistoryNode(PyObject* tensor);

} // namespace dync::capture

#endif
