//===- InterpreterProbe.h - Which Python the user means, asked cheaply ----===//
//
// dync links one libpython but runs the installation that the user's
// `python3` is (a virtualenv included), the way `python3 model.py` would. Before
// that libpython is initialized, the chosen interpreter is run once as a
// subprocess to say what it is and where it lives; the embedded interpreter is
// then configured from that answer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::python {

/// The program dync will ask, and why that one.
struct InterpreterChoice {
  /// A path to run; may be a launcher such as a pyenv shim.
  std::string program;
  /// "DYNC_PYTHON" or "python3 on PATH".
  std::string origin;

  /// "python3 on PATH ('/usr/bin/python3')", for messages.
  std::string describe() const;
};

/// What the chosen interpreter said about itself.
struct InterpreterInfo {
  InterpreterChoice choice;
  /// sys.implementation.name, e.g. "cpython".
  std::string implementation;
  /// "3.11.7".
  std::string version;
  /// sys.executable: the real interpreter behind any launcher.
  std::string executable;
  std::string prefix;
  std::string basePrefix;

  /// "CPython 3.11.7".
  std::string describeVersion() const;
};

/// DYNC_PYTHON if set (a path, or a name looked up on PATH), otherwise
/// `python3` on PATH.
llvm::Expected<InterpreterChoice> chooseInterpreter();

/// Runs `PROGRAM -I -S -c ...` and parses its answer. Fails with one clear
/// message if the program cannot be run, exits non-zero, hangs, or answers
/// something that is not the probe's format.
llvm::Expected<InterpreterInfo> probeInterpreter(const InterpreterChoice& choice);

/// The Python major.minor that dync is linked with, e.g. "3.11".
llvm::StringRef linkedPythonVersion();

/// Succeeds if \p info is the CPython major.minor that dync is linked with,
/// and the same installation as the linked libpython (or a virtualenv made
/// from it) when that installation can be found.
llvm::Error checkSupported(const InterpreterInfo& info);

/// chooseInterpreter, probeInterpreter and checkSupported in one.
llvm::Expected<InterpreterInfo> findInterpreter();

} // namespace dync::python
