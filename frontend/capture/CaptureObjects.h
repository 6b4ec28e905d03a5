//===- CaptureObjects.h - Python objects of values only capture holds -*- C++ -*-===//
//
// The classes and functions of frontend/capture/embedded/capture_objects.py
// (module dync_capture_objects, compiled into the binary with the oracle's
// modules): the autograd context, the stand-in for symbolic values in
// builtin methods, markers of contexts made while capturing, the class of
// capture's identity numbers, the .data assignment check.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace dync::capture {

/// The module dync_capture_objects, imported on first use. GIL held.
llvm::Expected<python::PyRef> captureObjectsModule();

/// The module's attribute \p name. GIL held.
llvm::Expected<python::PyRef> captureObject(llvm::StringRef name);

} // namespace dync::capture
