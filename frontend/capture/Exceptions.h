//===- Exceptions.h - Python exceptions raised in the captured program ----===//
//
// An exception the program raises while capturing (by `raise`, by an
// operation capture models, or by a real call capture makes on constants)
// is a RaisedException: an llvm::Error that carries the exception object.
// The dispatch loop hands it to the frame's handler, found through CPython
// 3.11's exception table, as CPython's own unwinding does; an exception no
// frame handles becomes the CaptureError it always was.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Value.h"

#include "frontend/bytecode/Instruction.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::capture {

/// A Python exception the program raised while capturing. `exception()` is
/// an Object value holding the real exception instance; `uncaughtReason()`
/// is what capture says when no handler catches it. Lives only while
/// capture runs (it holds a Python object).
class RaisedException : public llvm::ErrorInfo<RaisedException> {
public:
  static char ID;

  RaisedException(ValuePtr exception, std::string uncaughtReason)
      : exception_(std::move(exception)), reason_(std::move(uncaughtReason)) {}

  const ValuePtr& exception() const { return exception_; }
  PyObject* object() const { return exception_->object.get(); }
  const std::string& uncaughtReason() const { return reason_; }
  /// Where it was raised, innermost first (set by the dispatch loop).
  const std::vector<CaptureFrame>& stack() const { return stack_; }
  void setStack(std::vector<CaptureFrame> stack) { stack_ = std::move(stack); }
  bool hasLocation() const { return !stack_.empty(); }

  /// The CaptureError capture stops with when nothing handles it.
  llvm::Error toCaptureError() const { return llvm::make_error<CaptureError>(reason_, stack_); }

  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  ValuePtr exception_;
  std::string reason_;
  std::vector<CaptureFrame> stack_;
};

/// Whether the program may catch an exception of class \p type: any
/// exception class except those that say capture itself cannot go on
/// (torch's fake-tensor and symbolic-shape machinery: a data-dependent
/// output, a guard on an unbacked size, an operator without a fake
/// implementation; the tensor oracle's own errors) and those that stop the
/// process (KeyboardInterrupt, SystemExit, MemoryError).
bool isProgramExceptionType(PyObject* type);

/// Whether \p exception, raised by torch while the oracle ran a call on
/// fake tensors, is the program's (a shape mismatch, a bad argument) rather
/// than a limit of fake tensors: of a type the program may catch, not
/// NotImplementedError (an operator without a meta kernel), and not about
/// fake tensors, meta tensors, data pointers or symbolic sizes, which real
/// tensors do not raise.
bool isOracleProgramException(PyObject* exception);

/// Takes the pending Python exception, raised by an operation the program
/// itself performs (a real call on constants, an import, an attribute read
/// on a real object): a RaisedException when the program may catch it,
/// else the CaptureError pythonError() gives. Both say
/// "<what>: <Type>: <message>" when not caught. GIL held.
llvm::Error programError(const llvm::Twine& what);

/// A RaisedException of the real exception instance \p exception, saying
/// \p uncaughtReason when not caught.
llvm::Error raiseObject(python::PyRef exception, const llvm::Twine& uncaughtReason);

/// `Type(message)` for a builtin exception class (PyExc_KeyError...),
/// raised: what capture's own models of Python operations raise, as CPython
/// would. The reason when uncaught is "<Type>: <message>", after \p what
/// ("the program raises") when given.
llvm::Error raiseBuiltin(PyObject* type, const llvm::Twine& message, const llvm::Twine& what = "");

/// `type(argument)` raised (KeyError(key)), saying \p uncaughtReason when
/// not caught.
llvm::Error raiseWith(PyObject* type, PyObject* argument, const llvm::Twine& uncaughtReason);

/// When \p error is a RaisedException whose exception is an instance of
/// \p type (a class or tuple of classes, as `except` takes), consumes it,
/// leaving \p error success, and returns true; else leaves \p error as it
/// was and returns false.
bool catchRaised(llvm::Error& error, PyObject* type);

/// The handler of the exception table for instruction \p index, as CPython
/// looks it up: the row whose range holds the instruction, if any.
std::optional<bytecode::ExceptionRegion> findExceptionHandler(const bytecode::DecodedCode& code,
                                                              size_t index);

} // namespace dync::capture
