//===- InterpreterProbe.cpp - Which Python the user means, asked cheaply --===//
#include "frontend/embedding/InterpreterProbe.h"

#include "frontend/embedding/LinkedPython.h"
#include "frontend/embedding/SamePath.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <Python.h>

#include <optional>

namespace dync::python {

namespace {

/// Printed first so that a program which is not Python, or which prints
/// something of its own, is told apart from a real answer.
constexpr llvm::StringLiteral ProbeMarker = "dync-probe-1";

/// Printed after the marker. Runs under -I -S: no site, no environment, no
/// user code, so it is quick and the answer describes the installation
/// rather than the environment. Without site, sys.prefix is not yet a
/// virtualenv's, so the probe applies site's own rule: a pyvenv.cfg next to
/// the executable or one level up makes the executable's parent folder the
/// prefix. Written to run (and fail cleanly) on any Python version.
constexpr llvm::StringLiteral ProbeBody =
    "import sys, os\n"
    "print(getattr(getattr(sys, 'implementation', None), 'name', 'unknown'))\n"
    "print('%d.%d.%d' % tuple(sys.version_info[:3]))\n"
    "print(sys.executable)\n"
    "bindir = os.path.dirname(sys.executable)\n"
    "venv = [d for d in (bindir, os.path.dirname(bindir))\n"
    "        if os.path.isfile(os.path.join(d, 'pyvenv.cfg'))]\n"
    "print(os.path.dirname(bindir) if sys.executable and venv else sys.prefix)\n"
    "print(sys.base_prefix)\n";

/// A launcher such as a pyenv shim can take a while on a cold cache; a
/// program that takes longer than this is not going to answer.
constexpr unsigned ProbeTimeoutSeconds = 30;

/// Probe output beyond this is not an answer to the probe.
constexpr uint64_t MaxProbeOutput = 64 * 1024;

constexpr llvm::StringLiteral LinkedVersion =
    Py_STRINGIFY(PY_MAJOR_VERSION) "." Py_STRINGIFY(PY_MINOR_VERSION);

llvm::Error probeError(const InterpreterChoice& choice, const llvm::Twine& what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cannot use the Python interpreter " +
                                     llvm::Twine(choice.describe()) + ": " + what);
}

/// A temporary file that is removed when this goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  std::optional<llvm::FileRemover> remover;

  llvm::Error create(llvm::StringRef suffix) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("dync-probe", suffix, path))
      return llvm::createStringError(ec, "cannot create a temporary file: " + ec.message());
    remover.emplace(path);
    return llvm::Error::success();
  }

  std::string read() const {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return "";
    return (*buffer)->getBuffer().take_front(MaxProbeOutput + 1).str();
  }
};

/// The first non-empty line of what a failed program printed, to show why.
std::string firstLine(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 8> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.empty())
      return line.take_front(200).str();
  }
  return "";
}

std::string displayName(llvm::StringRef implementation) {
  if (implementation == "cpython")
    return "CPython";
  if (implementation == "pypy")
    return "PyPy";
  if (implementation == "graalpy")
    return "GraalPy";
  return implementation.str();
}

bool isVersion(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, '.');
  if (parts.size() != 3)
    return false;
  for (llvm::StringRef part : parts)
    if (part.empty() || !llvm::all_of(part, llvm::isDigit))
      return false;
  return true;
}

} // namespace

std::string InterpreterChoice::describe() const { return origin + " ('" + program + "')"; }

std::string InterpreterInfo::describeVersion() const {
  return displayName(implementation) + " " + version;
}

llvm::Expected<InterpreterChoice> chooseInterpreter() {
  std::optional<std::string> requested = llvm::sys::Process::GetEnv("DYNC_PYTHON");
  if (requested && !requested->empty()) {
    InterpreterChoice choice{*requested, "DYNC_PYTHON"};
    if (llvm::StringRef(*requested).contains('/')) {
      if (!llvm::sys::fs::exists(*requested))
        return probeError(choice, "no such file");
      return choice;
    }
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(*requested);
    if (!found)
      return probeError(choice, "no program of that name on PATH");
    choice.program = *found;
    return choice;
  }
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("python3");
  if (!found)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no 'python3' on PATH; dync needs CPython " + LinkedVersion +
                                       " (set DYNC_PYTHON to choose an interpreter)");
  return InterpreterChoice{*found, "python3 on PATH"};
}

llvm::Expected<InterpreterInfo> probeInterpreter(const InterpreterChoice& choice) {
  TempFile out, err;
  if (llvm::Error error = out.create("out"))
    return error;
  if (llvm::Error error = err.create("err"))
    return error;

  std::string script = ("print('" + ProbeMarker + "')\n" + ProbeBody).str();
  llvm::StringRef args[] = {choice.program, "-I", "-S", "-c", script};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(), llvm::StringRef(out.path),
                                                llvm::StringRef(err.path)};
  std::string message;
  bool failedToRun = false;
  int status =
      llvm::sys::ExecuteAndWait(choice.program, args, /*Env=*/std::nullopt, redirects,
                                ProbeTimeoutSeconds, /*MemoryLimit=*/0, &message, &failedToRun);
  if (failedToRun)
    return probeError(choice, "cannot run it: " + message);
  if (status < 0 && llvm::StringRef(message).contains("timed out"))
    return probeError(choice, "it did not answer within " + llvm::Twine(ProbeTimeoutSeconds) +
                                  " seconds when asked for its version");
  if (status < 0)
    return probeError(choice, message.empty() ? "it crashed" : "it crashed: " + message);
  std::string errorText = err.read();
  if (status > 0) {
    std::string why = firstLine(errorText);
    return probeError(choice, "it exited with status " + llvm::Twine(status) +
                                  " when asked for its version" +
                                  (why.empty() ? "" : " (" + why + ")"));
  }

  std::string answer = out.read();
  llvm::SmallVector<llvm::StringRef, 8> lines;
  llvm::StringRef(answer).split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (llvm::StringRef& line : lines)
    line = line.rtrim("\r");
  while (!lines.empty() && lines.back().empty())
    lines.pop_back();
  if (answer.size() > MaxProbeOutput || lines.size() != 6 || lines[0] != ProbeMarker ||
      !isVersion(lines[2])) {
    std::string got = firstLine(answer);
    return probeError(choice, "it did not answer like a Python interpreter (its output " +
                                  (got.empty() ? std::string("was empty") : "began '" + got + "'") +
                                  ")");
  }
  InterpreterInfo info{choice,         lines[1].str(), lines[2].str(),
                       lines[3].str(), lines[4].str(), lines[5].str()};
  if (info.executable.empty())
    return probeError(choice, "it does not know the path of its own executable");
  return info;
}

llvm::StringRef linkedPythonVersion() { return LinkedVersion; }

llvm::Error checkSupported(const InterpreterInfo& info) {
  llvm::StringRef needed = LinkedVersion;
  llvm::StringRef version(info.version);
  bool isNeeded = info.implementation == "cpython" &&
                  (version == needed || version.starts_with((needed + ".").str()));
  if (!isNeeded) {
    std::string found = info.choice.describe() + " is " + info.describeVersion();
    if (info.executable != info.choice.program)
      found += " ('" + info.executable + "')";
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   found + "; dync needs CPython " + needed +
                                       " (set DYNC_PYTHON to a CPython " + needed +
                                       " interpreter, or put one first on PATH)");
  }
  // The linked libpython decides which modules are built in and which it
  // expects as files in lib-dynload; another installation's files (a Linux
  // distribution builds math into its python3, for one) do not fit it.
  std::optional<std::string> linked = linkedInstallationPrefix();
  if (!linked || isSamePath(*linked, info.basePrefix))
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      info.choice.describe() + " is " + info.describeVersion() + " installed in '" +
          info.basePrefix + "', but dync is linked with the CPython " + needed + " installed in '" +
          *linked +
          "'; use that installation or a virtualenv made from it (set DYNC_PYTHON, or put "
          "it first on PATH)");
}

llvm::Expected<InterpreterInfo> findInterpreter() {
  llvm::Expected<InterpreterChoice> choice = chooseInterpreter();
  if (!choice)
    return choice.takeError();
  llvm::Expected<InterpreterInfo> info = probeInterpreter(*choice);
  if (!info)
    return info.takeError();
  if (llvm::Error error = checkSupported(*info))
    return error;
  return info;
}

} // namespace dync::python
