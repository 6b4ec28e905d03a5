//===- Command.h - One dync subcommand ------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <memory>

namespace CLI {
class App;
} // namespace CLI

namespace dync::driver {

/// Options that every subcommand understands.
struct GlobalOptions {
  /// Report which interpreter runs the user's code, and where it lives.
  bool verbose = false;
};

/// A subcommand: it declares its options and help on the command line
/// parser, then runs if the user chose it.
class Command {
public:
  virtual ~Command() = default;
  /// Adds the subcommand, its options and its help text to \p app.
  virtual CLI::App& install(CLI::App& app) = 0;
  /// Runs the subcommand once the command line has been parsed.
  virtual llvm::Error run(const GlobalOptions& options) = 0;
};

/// `dync inspect FILE.py:QUALNAME`.
std::unique_ptr<Command> createInspectCommand();

} // namespace dync::driver
