//===- main.cpp - The dync command line -----------------------------------===//
//
// Parses the command line, runs the chosen subcommand and turns its errors
// into diagnostics and an exit code. Each subcommand lives in its own file
// behind the Command interface.
//
//===----------------------------------------------------------------------===//
#include "driver/Command.h"
#include "driver/Diagnostics.h"
#include "driver/ExportCommand.h"
#include "driver/VersionCommand.h"

#include "frontend/embedding/InterpreterProbe.h"
#include "frontend/embedding/NameSuggestions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <csignal>

#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace dync::driver;

namespace {

constexpr const char* Description =
    "dync: an ahead-of-time graph-capture compiler for PyTorch programs";

std::string footer() {
  return R"(Examples:
  dync inspect model.py:Model.forward
      import model.py and show the bytecode of method forward of class Model
  dync inspect model.py:net.forward --verbose
      the same for the method bound to the module-level object net, and report
      which Python interpreter ran model.py
  dync --version --verbose
      also start the Python interpreter dync would use and report it

Run 'dync SUBCOMMAND --help' for a subcommand's options.

The user's code runs in the CPython )" +
         dync::python::linkedPythonVersion().str() +
         R"( that 'python3' on PATH is (an active
virtualenv included), or in the interpreter that DYNC_PYTHON names.
Exit status: 0 on success, 1 for an error in the input (file, module, entry,
interpreter), 2 for an error on the command line.)";
}

/// CLI11 writes sentences; compiler diagnostics start lower-case.
std::string diagnosticText(llvm::StringRef message) {
  std::string text = message.trim().str();
  if (text.size() > 1 && llvm::isUpper(text[0]) && !llvm::isUpper(text[1]))
    text[0] = llvm::toLower(text[0]);
  return text;
}

/// CLI11 reports an unknown subcommand as unexpected arguments, listed in
/// reverse; name it instead, with the closest real subcommand.
std::optional<std::string> unknownSubcommand(int argc, char** argv, const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* subcommand : app.get_subcommands({}))
    names.push_back(subcommand->get_name());
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.starts_with("-"))
      continue;
    if (llvm::is_contained(names, arg))
      return std::nullopt;
    std::string suggestion = dync::python::didYouMean(dync::python::closestNames(arg, names));
    return "unknown subcommand '" + arg.str() + "'" +
           (suggestion.empty() ? "; the subcommands are: " + llvm::join(names, ", ") : suggestion);
  }
  return std::nullopt;
}

int usageError(const llvm::Twine& message) {
  return reportError(llvm::make_error<UsageError>(message.str()));
}

} // namespace

int main(int argc, char** argv) {
  // The stack printer InitLLVM installs allocates; after a crash inside
  // malloc (a corrupted heap) it would wait forever for malloc's lock, and a
  // build or test run calling dync would hang instead of seeing a crash. So
  // the first crash handler, registered before it, arms an alarm whose
  // default action ends the process if printing has not finished by then.
  llvm::sys::AddSignalHandler(
      [](void*) {
        ::signal(SIGALRM, SIG_DFL);
        ::alarm(20);
      },
      nullptr);
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::setBugReportMsg("dync crashed; please report it with the command line above and, if "
                        "possible, the Python file it was given.\n");

  CLI::App app{Description, "dync"};
  GlobalOptions options;
  bool showVersion = false;
  app.add_flag("--version", showVersion,
               "Print dync's version and the LLVM, torch and Python versions it was built "
               "against (with --verbose, also the interpreter it would run)");
  app.add_flag("-v,--verbose", options.verbose,
               "Report on stderr which Python interpreter runs the user's code: its "
               "executable, sys.prefix, sys.base_prefix and sys.path");
  // Global options may also follow the subcommand: `dync inspect x.py:f -v`.
  app.fallthrough();
  app.require_subcommand(0, 1);
  app.footer(footer());

  std::vector<std::unique_ptr<Command>> available;
  available.push_back(createInspectCommand());
  available.push_back(createExportCommand());
  std::vector<std::pair<CLI::App*, Command*>> commands;
  for (std::unique_ptr<Command>& command : available)
    commands.emplace_back(&command->install(app), command.get());

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    llvm::outs() << app.help();
    return ExitSuccess;
  } catch (const CLI::CallForAllHelp&) {
    llvm::outs() << app.help("", CLI::AppFormatMode::All);
    return ExitSuccess;
  } catch (const CLI::ExtrasError& error) {
    if (std::optional<std::string> unknown = unknownSubcommand(argc, argv, app))
      return usageError(*unknown);
    return usageError(diagnosticText(error.what()) + "; see 'dync --help'");
  } catch (const CLI::ParseError& error) {
    return usageError(diagnosticText(error.what()) + "; see 'dync --help'");
  }

  if (showVersion) {
    llvm::Error error = printVersion(llvm::outs(), options.verbose);
    llvm::outs().flush();
    return reportError(std::move(error));
  }
  for (auto& [subcommand, command] : commands)
    if (subcommand->parsed())
      return reportError(command->run(options));
  return usageError("no subcommand given; see 'dync --help'");
}
