//===- EntrySession.cpp - The user's entry function, ready to compile -----===//
#include "driver/EntrySession.h"

#include "driver/Diagnostics.h"
#include "driver/VersionCommand.h"

#include "frontend/embedding/InterpreterProbe.h"

#include "llvm/Support/raw_ostream.h"

namespace dync::driver {

llvm::Expected<std::unique_ptr<EntrySession>> openEntry(llvm::StringRef specText,
                                                        const GlobalOptions& options) {
  auto session = std::make_unique<EntrySession>();
  llvm::Expected<python::EntrySpec> spec = python::parseEntrySpec(specText);
  if (!spec)
    return asUsageError(spec.takeError());
  session->spec = std::move(*spec);

  // Cheap checks first: no interpreter needs to start to find a typo.
  if (llvm::Error error = python::checkModuleFile(session->spec.path))
    return error;
  llvm::Expected<python::InterpreterInfo> interpreter = python::findInterpreter();
  if (!interpreter)
    return interpreter.takeError();
  // sys.argv is what `python3 model.py` would give the module.
  llvm::Expected<std::unique_ptr<python::EmbeddedPython>> python =
      python::EmbeddedPython::start(*interpreter, {session->spec.path});
  if (!python)
    return python.takeError();
  session->python = std::move(*python);
  if (options.verbose) {
    printRunningInterpreter(llvm::errs(), *session->python, "dync: ");
    llvm::errs().flush();
  }

  llvm::Expected<python::LoadedModule> module = python::importModuleFromPath(session->spec.path);
  if (!module)
    return module.takeError();
  session->module = std::move(*module);
  llvm::Expected<python::ResolvedEntry> entry =
      python::resolveEntry(session->module, session->spec.qualname);
  if (!entry)
    return entry.takeError();
  session->entry = std::move(*entry);
  session->python->flushStdio();
  return session;
}

} // namespace dync::driver
