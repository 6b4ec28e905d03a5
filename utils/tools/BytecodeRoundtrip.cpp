//===- BytecodeRoundtrip.cpp - Prove the bytecode toolkit on real code ----===//
//
// Compiles every Python file of the standard library and of torch, and for
// every code object in them decodes, re-encodes and rebuilds it through the
// C API. The rebuilt object must be identical to the original (same
// co_code, co_exceptiontable and co_linetable bytes, same marshal output)
// and the computed stack depth must equal co_stacksize.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/bytecode/StackEffect.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <Python.h>
#include <marshal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

using namespace dync;
using python::PyRef;

namespace {

llvm::cl::list<std::string> Inputs(llvm::cl::Positional,
                                   llvm::cl::desc("[files or directories to check instead of the "
                                                  "standard library and torch]"));
llvm::cl::opt<unsigned> MaxListed("max-listed", llvm::cl::init(50),
                                  llvm::cl::desc("How many mismatches and files that do not "
                                                 "compile to list (default 50)"));
llvm::cl::opt<bool> NoTorch("no-torch", llvm::cl::desc("Check the standard library only"));

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A Python call's result, or the pending exception as an error.
llvm::Expected<PyRef> checked(PyObject* result, llvm::StringRef context) {
  if (!result)
    return python::takePythonError(context);
  return PyRef::steal(result);
}

/// The directories to search by default: the standard library and the
/// installed torch package (found without importing it).
llvm::Expected<std::vector<std::string>> defaultRoots() {
  std::vector<std::string> roots;
  auto sysconfig = checked(PyImport_ImportModule("sysconfig"), "importing sysconfig");
  if (!sysconfig)
    return sysconfig.takeError();
  auto paths = checked(PyObject_CallMethod(sysconfig->get(), "get_paths", nullptr),
                       "calling sysconfig.get_paths()");
  if (!paths)
    return paths.takeError();
  std::optional<std::string> stdlib = python::utf8Of(PyDict_GetItemString(paths->get(), "stdlib"));
  if (!stdlib)
    return llvm::createStringError("sysconfig.get_paths() has no 'stdlib' path");
  roots.push_back(*stdlib);
  if (NoTorch)
    return roots;

  auto util = checked(PyImport_ImportModule("importlib.util"), "importing importlib.util");
  if (!util)
    return util.takeError();
  auto spec = checked(PyObject_CallMethod(util->get(), "find_spec", "s", "torch"),
                      "looking for the torch package");
  if (!spec)
    return spec.takeError();
  if (spec->get() == Py_None)
    return llvm::createStringError("the torch package is not installed");
  auto locations = checked(PyObject_GetAttrString(spec->get(), "submodule_search_locations"),
                           "reading torch's package location");
  if (!locations)
    return locations.takeError();
  PyRef first = PyRef::steal(PySequence_GetItem(locations->get(), 0));
  std::optional<std::string> torch = python::utf8Of(first.get());
  if (!torch) {
    PyErr_Clear();
    return llvm::createStringError("torch has no package directory");
  }
  roots.push_back(*torch);
  return roots;
}

/// Every .py file under \p root (or \p root itself), in a stable order,
/// leaving out installed third-party packages (site-packages).
llvm::Error collectFiles(const std::string& root, std::vector<std::string>& files) {
  if (!llvm::sys::fs::is_directory(root)) {
    if (!llvm::sys::fs::exists(root))
      return llvm::createStringError("%s does not exist", root.c_str());
    files.push_back(root);
    return llvm::Error::success();
  }
  std::vector<std::string> found;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(root, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    llvm::StringRef name = llvm::sys::path::filename(path);
    if (it->type() == llvm::sys::fs::file_type::directory_file) {
      if (name == "site-packages" || name == "__pycache__")
        it.no_push();
      continue;
    }
    if (path.ends_with(".py"))
      found.push_back(path.str());
  }
  if (ec)
    return llvm::createStringError("listing %s: %s", root.c_str(), ec.message().c_str());
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
  return llvm::Error::success();
}

struct Mismatch {
  std::string qualname;
  std::string file;
  int line = 0;
  std::string reason;
};

class Roundtrip {
public:
  Roundtrip(const bytecode::OpcodeTable& opcodes, const bytecode::StackEffects& effects)
      : opcodes_(opcodes), effects_(effects) {}

  /// Compiles \p file and checks all its code objects; false if it does
  /// not compile.
  bool checkFile(const std::string& file, std::string& compileError);

  size_t codeObjects = 0;
  size_t identical = 0;
  size_t stackDepthEqual = 0;
  std::vector<Mismatch> mismatches;

private:
  void checkTree(PyCodeObject* code, const std::string& file);
  void checkOne(PyCodeObject* code, const std::string& file);
  /// Why the rebuilt object differs from \p original, or empty.
  std::string compare(PyCodeObject* original, const bytecode::RawCode& raw,
                      const bytecode::RawCode& encoded);

  const bytecode::OpcodeTable& opcodes_;
  const bytecode::StackEffects& effects_;
  PyObject* compile_ = nullptr;
};

bool Roundtrip::checkFile(const std::string& file, std::string& compileError) {
  if (!compile_)
    compile_ = PyDict_GetItemString(PyEval_GetBuiltins(), "compile");
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    compileError = buffer.getError().message();
    return false;
  }
  PyRef source = PyRef::steal(
      PyBytes_FromStringAndSize((*buffer)->getBufferStart(), (*buffer)->getBufferSize()));
  PyRef name = PyRef::steal(python::newStr(file));
  PyRef args = PyRef::steal(Py_BuildValue("(OOs)", source.get(), name.get(), "exec"));
  PyRef kwargs = PyRef::steal(Py_BuildValue("{s:O}", "dont_inherit", Py_True));
  PyRef code =
      PyRef::steal(args && kwargs ? PyObject_Call(compile_, args.get(), kwargs.get()) : nullptr);
  if (!code || !PyCode_Check(code.get())) {
    llvm::Error error = code ? llvm::createStringError("compile() did not return code")
                             : python::takePythonError("compiling");
    compileError = llvm::toString(std::move(error));
    return false;
  }
  checkTree(reinterpret_cast<PyCodeObject*>(code.get()), file);
  return true;
}

void Roundtrip::checkTree(PyCodeObject* code, const std::string& file) {
  checkOne(code, file);
  PyObject* consts = code->co_consts;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
    PyObject* item = PyTuple_GET_ITEM(consts, i);
    if (PyCode_Check(item))
      checkTree(reinterpret_cast<PyCodeObject*>(item), file);
  }
}

void Roundtrip::checkOne(PyCodeObject* code, const std::string& file) {
  ++codeObjects;
  auto report = [&](std::string reason) {
    mismatches.push_back(Mismatch{python::utf8Of(code->co_qualname).value_or("?"), file,
                                  code->co_firstlineno, std::move(reason)});
  };
  auto raw = bytecode::readRawCode(code);
  if (!raw)
    return report("reading: " + llvm::toString(raw.takeError()));
  auto decoded = bytecode::decode(*raw, opcodes_);
  if (!decoded)
    return report("decoding: " + llvm::toString(decoded.takeError()));
  auto encoded = bytecode::encode(*decoded, opcodes_, effects_);
  if (!encoded)
    return report("encoding: " + llvm::toString(encoded.takeError()));

  std::string reasons;
  if (encoded->stackSize == raw->stackSize)
    ++stackDepthEqual;
  else
    reasons = llvm::formatv("computed stack depth {0}, co_stacksize {1}", encoded->stackSize,
                            raw->stackSize);
  std::string difference = compare(code, *raw, *encoded);
  if (difference.empty())
    ++identical;
  else
    reasons += (reasons.empty() ? "" : "; ") + difference;
  if (!reasons.empty())
    report(std::move(reasons));
}

std::string firstDifference(const char* field, const std::vector<uint8_t>& original,
                            const std::vector<uint8_t>& encoded) {
  if (original == encoded)
    return "";
  auto [at, _] = std::mismatch(original.begin(), original.end(), encoded.begin(), encoded.end());
  return llvm::formatv("{0} differs at byte {1} (lengths {2} and {3})", field,
                       at - original.begin(), original.size(), encoded.size());
}

std::string Roundtrip::compare(PyCodeObject* original, const bytecode::RawCode& raw,
                               const bytecode::RawCode& encoded) {
  for (std::string difference :
       {firstDifference("co_code", raw.code, encoded.code),
        firstDifference("co_exceptiontable", raw.exceptionTable, encoded.exceptionTable),
        firstDifference("co_linetable", raw.lineTable, encoded.lineTable)})
    if (!difference.empty())
      return difference;

  auto rebuilt = bytecode::buildCodeObject(original, encoded);
  if (!rebuilt)
    return "building: " + llvm::toString(rebuilt.takeError());
  PyRef copy = PyRef::steal(*rebuilt);
  // marshal flags an object referenced more than once so that a reader can
  // share it; holding both objects in one tuple gives them the same status.
  PyRef both = PyRef::steal(PyTuple_Pack(2, reinterpret_cast<PyObject*>(original), copy.get()));
  PyRef originalBytes = PyRef::steal(
      PyMarshal_WriteObjectToString(reinterpret_cast<PyObject*>(original), Py_MARSHAL_VERSION));
  PyRef copyBytes = PyRef::steal(PyMarshal_WriteObjectToString(copy.get(), Py_MARSHAL_VERSION));
  if (!both || !originalBytes || !copyBytes)
    return "marshal: " + llvm::toString(python::takePythonError("marshalling"));
  llvm::StringRef left(PyBytes_AS_STRING(originalBytes.get()),
                       PyBytes_GET_SIZE(originalBytes.get()));
  llvm::StringRef right(PyBytes_AS_STRING(copyBytes.get()), PyBytes_GET_SIZE(copyBytes.get()));
  if (left != right) {
    auto [at, _] = std::mismatch(left.begin(), left.end(), right.begin(), right.end());
    size_t offset = at - left.begin();
    return llvm::formatv("marshal.dumps differs at byte {0} (lengths {1} and {2})", offset,
                         left.size(), right.size());
  }
  return "";
}

int run() {
  auto opcodes = bytecode::OpcodeTable::fromInterpreter();
  if (!opcodes) {
    llvm::errs() << "error: " << llvm::toString(opcodes.takeError()) << "\n";
    return 2;
  }
  auto effects = bytecode::StackEffects::create(*opcodes);
  if (!effects) {
    llvm::errs() << "error: " << llvm::toString(effects.takeError()) << "\n";
    return 2;
  }

  std::vector<std::string> roots(Inputs.begin(), Inputs.end());
  if (roots.empty()) {
    auto found = defaultRoots();
    if (!found) {
      llvm::errs() << "error: " << llvm::toString(found.takeError()) << "\n";
      return 2;
    }
    roots = std::move(*found);
  }
  std::vector<std::string> files;
  for (const std::string& root : roots)
    if (llvm::Error error = collectFiles(root, files)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return 2;
    }

  // Old test data in the standard library trips SyntaxWarnings; they say
  // nothing about the toolkit.
  if (PyRun_SimpleString("import warnings; warnings.simplefilter('ignore')") != 0)
    return 2;

  Clock::time_point start = Clock::now();
  Clock::time_point lastProgress = start;
  Roundtrip roundtrip(*opcodes, *effects);
  std::vector<std::pair<std::string, std::string>> notCompiled;
  for (size_t index = 0; index < files.size(); ++index) {
    std::string compileError;
    if (!roundtrip.checkFile(files[index], compileError))
      notCompiled.emplace_back(files[index], std::move(compileError));
    if (secondsSince(lastProgress) >= 5) {
      lastProgress = Clock::now();
      llvm::errs() << llvm::formatv("[{0}/{1} files] code objects: {2}, mismatches: {3}, "
                                    "seconds: {4:f1}\n",
                                    index + 1, files.size(), roundtrip.codeObjects,
                                    roundtrip.mismatches.size(), secondsSince(start));
    }
  }

  llvm::outs() << llvm::formatv("files: {0} in {1} director{2}, compiled: {3}, not compiled: "
                                "{4}\n",
                                files.size(), roots.size(), roots.size() == 1 ? "y" : "ies",
                                files.size() - notCompiled.size(), notCompiled.size());
  size_t listedFiles = std::min<size_t>(notCompiled.size(), MaxListed);
  for (size_t i = 0; i < listedFiles; ++i)
    llvm::outs() << "not compiled: " << notCompiled[i].first << ": " << notCompiled[i].second
                 << "\n";
  if (notCompiled.size() > listedFiles)
    llvm::outs() << "... and " << notCompiled.size() - listedFiles << " more files\n";
  size_t listed = std::min<size_t>(roundtrip.mismatches.size(), MaxListed);
  for (size_t i = 0; i < listed; ++i) {
    const Mismatch& mismatch = roundtrip.mismatches[i];
    llvm::outs() << "mismatch: " << mismatch.qualname << " (" << mismatch.file << ":"
                 << mismatch.line << "): " << mismatch.reason << "\n";
  }
  if (roundtrip.mismatches.size() > listed)
    llvm::outs() << "... and " << roundtrip.mismatches.size() - listed << " more mismatches\n";
  llvm::outs() << llvm::formatv(
      "code objects: {0}, identical: {1}, stack depth equal to co_stacksize: {2}, "
      "seconds: {3:f1}\n",
      roundtrip.codeObjects, roundtrip.identical, roundtrip.stackDepthEqual, secondsSince(start));
  llvm::outs().flush();
  bool allGood = roundtrip.codeObjects > 0 && roundtrip.identical == roundtrip.codeObjects &&
                 roundtrip.stackDepthEqual == roundtrip.codeObjects;
  return allGood ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Decodes, re-encodes and rebuilds every code object of the standard library and torch, "
      "and checks that the result is identical to what CPython compiled.\n");
  Py_InitializeEx(/*initsigs=*/0);
  int status = run();
  if (Py_FinalizeEx() < 0 && status == 0)
    status = 120;
  return status;
}
