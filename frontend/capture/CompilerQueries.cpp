//===- CompilerQueries.cpp - What a program asks about being compiled -----===//
#include "frontend/capture/CompilerQueries.h"

#include "frontend/capture/ImportedAttribute.h"

namespace dync::capture {

bool isCompilerQuery(PyObject* function) {
  // Read afresh each time: cheap, and right even if torch.compiler is
  // imported after capture starts.
  return function && PyFunction_Check(function) &&
         function == importedAttribute("torch.compiler", "is_compiling");
}

bool isExportQuery(PyObject* function) {
  return function && PyFunction_Check(function) &&
         function == importedAttribute("torch.compiler", "is_exporting");
}

} // namespace dync::capture
