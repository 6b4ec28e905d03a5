//===- LinkedPython.cpp - Where the libpython dync is linked with lives ---===//
#include "frontend/embedding/LinkedPython.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <Python.h>
#include <link.h>

namespace dync::python {

namespace {

/// The path of the loaded shared library whose file name starts with
/// "libpythonX.Y", or "". Asked of the dynamic loader because the address
/// of a libpython symbol can resolve into the executable (copy relocations,
/// canonical PLT entries).
std::string loadedLibpython() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        llvm::StringRef path = info->dlpi_name ? info->dlpi_name : "";
        if (!llvm::sys::path::filename(path).starts_with(
                "libpython" Py_STRINGIFY(PY_MAJOR_VERSION) "." Py_STRINGIFY(PY_MINOR_VERSION)))
          return 0;
        *static_cast<std::string*>(data) = path.str();
        return 1;
      },
      &found);
  return found;
}

} // namespace

std::optional<std::string> linkedInstallationPrefix() {
  std::string loaded = loadedLibpython();
  llvm::SmallString<256> library;
  if (loaded.empty() || llvm::sys::fs::real_path(loaded, library))
    return std::nullopt;
  // Search upwards, as CPython's getpath does from its executable, so that
  // multiarch layouts (/usr/lib/x86_64-linux-gnu/libpython3.11.so) work.
  llvm::SmallString<64> landmark(
      "lib/python" Py_STRINGIFY(PY_MAJOR_VERSION) "." Py_STRINGIFY(PY_MINOR_VERSION) "/os.py");
  for (llvm::StringRef dir = llvm::sys::path::parent_path(library); !dir.empty();
       dir = llvm::sys::path::parent_path(dir)) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, landmark);
    if (llvm::sys::fs::exists(candidate))
      return dir.str();
    if (dir == llvm::sys::path::root_path(dir))
      break;
  }
  return std::nullopt;
}

} // namespace dync::python
