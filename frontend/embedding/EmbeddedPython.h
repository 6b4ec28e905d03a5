//===- EmbeddedPython.h - The interpreter dync runs the user's code in ----===//
#pragma once

#include "frontend/embedding/InterpreterProbe.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace dync::python {

/// What the running embedded interpreter reports about itself.
struct RunningInterpreter {
  /// sys.version up to the first space, e.g. "3.11.7".
  std::string version;
  std::string executable;
  std::string prefix;
  std::string basePrefix;
  std::vector<std::string> path;
};

/// The linked libpython, initialized as the installation that a probed
/// interpreter belongs to: its standard library, its site-packages (a
/// virtualenv's included) and PYTHONPATH, but none of the other PYTHON*
/// variables. There is at most one per process; destroying it flushes the
/// interpreter's stdout and stderr and finalizes it.
class EmbeddedPython {
public:
  /// Initializes the interpreter for \p interpreter with sys.argv set to
  /// \p argv, imports site, and checks that sys.prefix is the one the probe
  /// reported. The calling thread holds the GIL afterwards.
  static llvm::Expected<std::unique_ptr<EmbeddedPython>> start(const InterpreterInfo& interpreter,
                                                               llvm::ArrayRef<std::string> argv);

  ~EmbeddedPython();
  EmbeddedPython(const EmbeddedPython&) = delete;
  EmbeddedPython& operator=(const EmbeddedPython&) = delete;

  const InterpreterInfo& interpreter() const { return interpreter_; }
  RunningInterpreter describe() const;

  /// Flushes sys.stdout and sys.stderr, so that what the user's code printed
  /// comes before what dync prints next.
  void flushStdio() const;

private:
  explicit EmbeddedPython(InterpreterInfo interpreter) : interpreter_(std::move(interpreter)) {}

  InterpreterInfo interpreter_;
};

} // namespace dync::python
