//===- Location.cpp - Where in the user's Python source a node came from --===//

#include "ir/Location.h"

#include "ir/Syntax.h"

namespace dync::ir {

Location::Location(std::vector<LocationFrame> frames) {
  if (!frames.empty())
    frames_ = std::make_shared<const std::vector<LocationFrame>>(std::move(frames));
}

void Location::print(llvm::raw_ostream& os) const {
  if (empty())
    return;
  os << "loc(";
  for (auto [i, frame] : llvm::enumerate(frames())) {
    if (i > 0)
      os << " at ";
    printQuoted(os, frame.file);
    os << ':' << frame.line;
    if (frame.column)
      os << ':' << frame.column;
  }
  os << ')';
}

std::string Location::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto printFrame = [&](const LocationFrame& frame) {
    os << frame.file << ':' << frame.line;
    if (frame.column)
      os << ':' << frame.column;
  };
  for (auto [i, frame] : llvm::enumerate(frames())) {
    if (i == 0) {
      printFrame(frame);
      continue;
    }
    os << ", inlined from ";
    printFrame(frame);
  }
  return text;
}

} // namespace dync::ir
