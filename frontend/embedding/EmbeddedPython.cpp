//===- EmbeddedPython.cpp - The interpreter dync runs the user's code in --===//
#include "frontend/embedding/EmbeddedPython.h"

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "frontend/embedding/SamePath.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <Python.h>

#include <cstdlib>

namespace dync::python {

namespace {

bool envIsSet(const char* name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  return value && !value->empty();
}

llvm::Error statusError(const PyStatus& status) {
  std::string message = "cannot initialize the embedded Python";
  if (status.func)
    message += std::string(" (") + status.func + ")";
  if (status.err_msg)
    message += std::string(": ") + status.err_msg;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Fills \p config from the probe's answer. It starts from the isolated
/// configuration so that no PYTHON* variable (PYTHONHOME above all) can point
/// the interpreter somewhere other than where the probe said it lives; the
/// few variables that change how user code behaves rather than where Python
/// comes from are honoured explicitly.
PyStatus configure(PyConfig& config, const InterpreterInfo& interpreter,
                   llvm::ArrayRef<std::string> argv) {
  PyConfig_InitIsolatedConfig(&config);
  config.isolated = 0;
  config.user_site_directory = !envIsSet("PYTHONNOUSERSITE");
  config.write_bytecode = !envIsSet("PYTHONDONTWRITEBYTECODE");
  config.buffered_stdio = !envIsSet("PYTHONUNBUFFERED");
  config.parse_argv = 0;
  // PYTHONPATH must come before site-packages, and getpath ignores it
  // without use_environment, so site is imported after inserting it.
  config.site_import = 0;
  // The frozen copies of standard-library modules are the linked
  // libpython's build; where the installation's own files differ (a
  // distribution patches site.py to find its dist-packages, for one), those
  // files are what its python3 runs.
  config.use_frozen_modules = 0;

  // getpath finds prefix, the standard library and any pyvenv.cfg from the
  // executable, exactly as it does when that executable runs.
  PyStatus status =
      PyConfig_SetBytesString(&config, &config.executable, interpreter.executable.c_str());
  if (PyStatus_Exception(status))
    return status;
  status = PyConfig_SetBytesString(&config, &config.program_name, interpreter.executable.c_str());
  if (PyStatus_Exception(status))
    return status;

  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  return PyConfig_SetBytesArgv(&config, static_cast<Py_ssize_t>(args.size()), args.data());
}

/// Puts PYTHONPATH's entries first on sys.path, where `python3` has them.
llvm::Error insertPythonPath() {
  std::optional<std::string> value = llvm::sys::Process::GetEnv("PYTHONPATH");
  if (!value || value->empty())
    return llvm::Error::success();
  PyObject* path = PySys_GetObject("path"); // borrowed
  if (!path || !PyList_Check(path))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the embedded Python has no sys.path list");
  llvm::SmallVector<llvm::StringRef, 8> entries;
  llvm::StringRef(*value).split(entries, llvm::sys::EnvPathSeparator, -1, /*KeepEmpty=*/false);
  Py_ssize_t index = 0;
  for (llvm::StringRef entry : entries) {
    llvm::SmallString<256> absolute(entry);
    llvm::sys::fs::make_absolute(absolute);
    PyRef text = PyRef::steal(newStr(absolute));
    if (!text || PyList_Insert(path, index++, text.get()) < 0)
      return takePythonError("adding PYTHONPATH to sys.path");
  }
  return llvm::Error::success();
}

std::string sysString(const char* name) { return utf8Of(PySys_GetObject(name)).value_or(""); }

bool started = false;

/// Lets the OpenMP worker threads of the libraries the user's code loads
/// (torch's intra-op pool) wait for work asleep rather than spinning. dync
/// runs few kernels (the oracle's checks and layout probes on small
/// tensors), and after each parallel region an idle worker spins for
/// milliseconds: about 30 ms of CPU time in a cold capture of a small
/// transformer, on a second core, for no result. How a worker waits
/// changes nothing a kernel computes, nor how many threads it has. Set
/// before the interpreter starts, since OpenMP reads it when torch loads
/// it; a policy the user set is left alone.
void waitPassivelyForWork() {
  if (!envIsSet("OMP_WAIT_POLICY") && !envIsSet("GOMP_SPINCOUNT"))
    ::setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
}

} // namespace

llvm::Expected<std::unique_ptr<EmbeddedPython>>
EmbeddedPython::start(const InterpreterInfo& interpreter, llvm::ArrayRef<std::string> argv) {
  if (started)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the embedded Python can only be started once");
  started = true;
  waitPassivelyForWork();

  // Pre-initialize as `python3` does, so that a C or POSIX locale still
  // gives UTF-8 (PEP 538, PEP 540).
  PyPreConfig preconfig;
  PyPreConfig_InitPythonConfig(&preconfig);
  preconfig.parse_argv = 0;
  PyStatus status = Py_PreInitialize(&preconfig);
  if (PyStatus_Exception(status))
    return statusError(status);

  PyConfig config;
  status = configure(config, interpreter, argv);
  if (!PyStatus_Exception(status))
    status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status))
    return statusError(status);
  // From here on the destructor finalizes, whatever fails next.
  std::unique_ptr<EmbeddedPython> python(new EmbeddedPython(interpreter));

  if (llvm::Error error = insertPythonPath())
    return error;
  // site leaves sys.path alone when imported under no_site (as here, see
  // configure), so its main() is called explicitly.
  PyRef site = PyRef::steal(PyImport_ImportModule("site"));
  PyRef done = site ? PyRef::steal(PyObject_CallMethod(site.get(), "main", nullptr)) : PyRef();
  if (!done)
    return takePythonError("running the site module");

  std::string prefix = sysString("prefix");
  if (!isSamePath(prefix, interpreter.prefix))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the embedded Python did not start as " +
                                       interpreter.choice.describe() + ": its sys.prefix is '" +
                                       prefix + "', but '" + interpreter.executable +
                                       "' reports '" + interpreter.prefix + "'");
  return python;
}

EmbeddedPython::~EmbeddedPython() {
  flushStdio();
  Py_FinalizeEx();
}

RunningInterpreter EmbeddedPython::describe() const {
  RunningInterpreter running;
  running.version = llvm::StringRef(Py_GetVersion()).split(' ').first.str();
  running.executable = sysString("executable");
  running.prefix = sysString("prefix");
  running.basePrefix = sysString("base_prefix");
  PyObject* path = PySys_GetObject("path");
  if (path && PyList_Check(path))
    running.path = strItemsOf(path);
  return running;
}

void EmbeddedPython::flushStdio() const {
  for (const char* name : {"stdout", "stderr"}) {
    PyObject* stream = PySys_GetObject(name);
    if (!stream || stream == Py_None)
      continue;
    PyRef result = PyRef::steal(PyObject_CallMethod(stream, "flush", nullptr));
    if (!result)
      PyErr_Clear();
  }
}

} // namespace dync::python
