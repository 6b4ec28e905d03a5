//===- VersionCommand.cpp - `dync --version` ------------------------------===//
#include "driver/VersionCommand.h"

#include "frontend/embedding/EmbeddedPython.h"
#include "frontend/embedding/InterpreterProbe.h"

namespace dync::driver {

llvm::Error printVersion(llvm::raw_ostream& os, bool verbose) {
  // The torch version is the one found when dync was configured; reading the
  // installed one would mean importing torch, which costs seconds.
  os << "dync version " DYNC_VERSION "\n"
     << "built with:\n"
     << "  LLVM " DYNC_LLVM_VERSION "\n"
     << "  torch " DYNC_TORCH_VERSION "\n"
     << "  Python " DYNC_PYTHON_VERSION " (" DYNC_PYTHON_EXECUTABLE ")\n";
  if (!verbose)
    return llvm::Error::success();
  os.flush();
  llvm::Expected<python::InterpreterInfo> interpreter = python::findInterpreter();
  if (!interpreter)
    return interpreter.takeError();
  llvm::Expected<std::unique_ptr<python::EmbeddedPython>> python =
      python::EmbeddedPython::start(*interpreter, {""});
  if (!python)
    return python.takeError();
  os << "running with:\n";
  printRunningInterpreter(os, **python, "  ");
  return llvm::Error::success();
}

void printRunningInterpreter(llvm::raw_ostream& os, const python::EmbeddedPython& python,
                             llvm::StringRef linePrefix) {
  python::RunningInterpreter running = python.describe();
  const python::InterpreterInfo& chosen = python.interpreter();
  os << linePrefix << "python: " << running.executable << " (" << chosen.describeVersion()
     << ", from " << chosen.choice.describe() << ")\n";
  os << linePrefix << "libpython: " << running.version << "\n";
  os << linePrefix << "sys.prefix: " << running.prefix << "\n";
  os << linePrefix << "sys.base_prefix: " << running.basePrefix << "\n";
  os << linePrefix << "sys.path:";
  for (const std::string& entry : running.path)
    os << "\n" << linePrefix << "  " << entry;
  os << "\n";
}

} // namespace dync::driver
