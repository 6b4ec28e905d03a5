//===- InspectCommand.cpp - `dync inspect FILE.py:QUALNAME` ---------------===//
#include "compiler/EmitBytecode.h"
#include "driver/Command.h"
#include "driver/EntrySession.h"

#include "codegen/Manifest.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

namespace dync::driver {

namespace {

/// The description of `dync inspect --help` below its options.
constexpr const char* InspectFooter = R"(Examples:
  dync inspect model.py:Model.forward
      import model.py and show method forward of class Model
  dync inspect model.py:net.encoder.forward --verbose
      show the forward method of the object net.encoder, bound to it, and
      report which Python interpreter ran model.py

ENTRY is FILE.py:QUALNAME. QUALNAME is a dotted path from the module to a
Python function: f, Model.forward, Outer.Inner.method, or an attribute path
through module-level objects such as net.forward or net.encoder.forward.
The file is imported as a module named after its stem, so an
`if __name__ == "__main__":` block does not run.

  dync inspect model.dync.so
      print the manifest of an artifact written by 'dync export -o': the
      versions and CPU it was built for, the source file and its hash, and
      each entry's module, the functions its capture ran with the digests
      of their code, and its graph and guards. The library is read, never
      loaded, and its seal is checked first: a corrupt or truncated file is
      an error.)";

class InspectCommand : public Command {
public:
  CLI::App& install(CLI::App& app) override {
    CLI::App* command =
        app.add_subcommand("inspect", "Show one function's bytecode, e.g. 'dync inspect "
                                      "model.py:Model.forward', or an artifact's manifest, e.g. "
                                      "'dync inspect model.dync.so'");
    command
        ->add_option("ENTRY", entry_,
                     "The function to show, as FILE.py:QUALNAME, or an artifact (FILE.so)")
        ->type_name("FILE.py:QUALNAME|FILE.so")
        ->required();
    command->add_option("--emit", emit_, "What to show; bytecode is the only kind so far")
        ->type_name("KIND")
        ->check(CLI::IsMember({"bytecode"}))
        ->capture_default_str();
    command->footer(InspectFooter);
    return *command;
  }

  llvm::Error run(const GlobalOptions& options) override {
    if (llvm::StringRef(entry_).ends_with(".so"))
      return printManifest();
    llvm::Expected<std::unique_ptr<EntrySession>> session = openEntry(entry_, options);
    if (!session)
      return session.takeError();
    const python::ResolvedEntry& entry = (*session)->entry;
    llvm::raw_ostream& os = llvm::outs();
    os << "# entry: " << (*session)->spec.text << " (" << entry.describe() << ")\n";
    os << "# file: " << python::utf8Of(entry.codeObject()->co_filename).value_or("?") << "\n";
    os << "# first line: " << entry.codeObject()->co_firstlineno << "\n";
    llvm::Error error = compiler::emitBytecode(os, entry);
    os.flush();
    return error;
  }

private:
  llvm::Error printManifest() {
    llvm::Expected<std::string> manifest = codegen::readManifest(entry_);
    if (!manifest)
      return manifest.takeError();
    llvm::outs() << *manifest;
    llvm::outs().flush();
    return llvm::Error::success();
  }

  std::string entry_;
  std::string emit_ = "bytecode";
};

} // namespace

std::unique_ptr<Command> createInspectCommand() { return std::make_unique<InspectCommand>(); }

} // namespace dync::driver
