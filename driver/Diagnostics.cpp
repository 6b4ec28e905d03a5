//===- Diagnostics.cpp - Rendering errors the way a compiler does ---------===//
#include "driver/Diagnostics.h"

#include "frontend/embedding/PythonError.h"
#include "frontend/embedding/SourceError.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace dync::driver {

namespace {

using python::PythonException;
using python::SourceError;
using python::SourceLocation;

/// "<where>: error: " with the location in bold and "error:" in red, as
/// clang does; colors appear only on a terminal.
void printHeadline(llvm::raw_ostream& os, llvm::StringRef where) {
  llvm::WithColor(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true) << where << ": ";
  llvm::WithColor(os, llvm::HighlightColor::Error) << "error: ";
}

void printMessage(llvm::raw_ostream& os, llvm::StringRef message) {
  llvm::WithColor(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true) << message;
  os << '\n';
}

bool isContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// The offending line, then a caret under \p location's column (and tildes
/// along its range). Columns count characters, as Python's do; tabs before
/// the caret are kept so that it lines up however tabs are displayed.
/// Without a column (an instruction whose range spans several lines, such
/// as a `for` or `with` statement's own) the line alone still shows the
/// reader which statement it is.
void printSourceLine(llvm::raw_ostream& os, const SourceLocation& location) {
  if (location.lineText.empty())
    return;
  os << location.lineText << '\n';
  if (location.column == 0)
    return;
  std::string indent;
  unsigned characters = 0;
  for (char c : location.lineText) {
    if (isContinuationByte(c))
      continue;
    if (characters + 1 >= location.column)
      break;
    indent += c == '\t' ? '\t' : ' ';
    ++characters;
  }
  unsigned lineCharacters =
      static_cast<unsigned>(std::count_if(location.lineText.begin(), location.lineText.end(),
                                          [](char c) { return !isContinuationByte(c); }));
  unsigned width = location.endColumn > location.column ? location.endColumn - location.column : 1;
  width =
      std::max(1u, std::min(width, lineCharacters > characters ? lineCharacters - characters : 1u));
  os << indent;
  llvm::WithColor(os, llvm::raw_ostream::GREEN, /*Bold=*/true)
      << '^' << std::string(width - 1, '~');
  os << '\n';
}

void printSourceError(llvm::raw_ostream& os, const SourceError& error) {
  const SourceLocation& location = error.location();
  std::string where = "dync";
  if (!location.file.empty()) {
    where = location.file;
    if (location.line) {
      where += ":" + std::to_string(location.line);
      if (location.column)
        where += ":" + std::to_string(location.column);
    }
  }
  printHeadline(os, where);
  printMessage(os, error.text());
  printSourceLine(os, location);
}

/// The headline names what dync was doing and the exception's type; the
/// traceback below it ends with the exception's own line, as Python prints
/// it.
void printPythonException(llvm::raw_ostream& os, const PythonException& error) {
  printHeadline(os, "dync");
  if (error.traceback().empty()) {
    printMessage(os, error.message());
    return;
  }
  std::string headline = error.context().empty() ? "Python raised " + error.typeName()
                                                 : error.context() + " raised " + error.typeName();
  printMessage(os, headline);
  os << error.traceback();
  if (!llvm::StringRef(error.traceback()).ends_with("\n"))
    os << '\n';
}

} // namespace

llvm::Error asUsageError(llvm::Error error) {
  if (!error)
    return error;
  return llvm::make_error<UsageError>(llvm::toString(std::move(error)));
}

int reportError(llvm::Error error) {
  int exitCode = ExitSuccess;
  llvm::raw_ostream& os = llvm::errs();
  llvm::handleAllErrors(
      std::move(error),
      [&](const UsageError& usage) {
        printHeadline(os, "dync");
        printMessage(os, usage.message());
        exitCode = std::max<int>(exitCode, ExitUsageError);
      },
      [&](const SourceError& source) {
        printSourceError(os, source);
        exitCode = std::max<int>(exitCode, ExitUserError);
      },
      [&](const PythonException& exception) {
        printPythonException(os, exception);
        exitCode = std::max<int>(exitCode, ExitUserError);
      },
      [&](const llvm::ErrorInfoBase& other) {
        printHeadline(os, "dync");
        printMessage(os, other.message());
        exitCode = std::max<int>(exitCode, ExitUserError);
      });
  os.flush();
  return exitCode;
}

} // namespace dync::driver
