//===- NodeLocation.cpp - The user's line for each node capture makes -----===//
//
// Every node the graph builder makes is stamped with the location of the
// instruction capture is executing (Capture.cpp sets this as the builder's
// location source): the file, line and column of each frame, innermost
// first, so a node made inside an inlined call names that call's line and
// the caller's lines it was reached from.
//
//===----------------------------------------------------------------------===//

#include "frontend/capture/BytecodeMachine.h"

using namespace dync;
using namespace dync::capture;

namespace {

ir::LocationFrame frameLocation(const Frame& frame) {
  ir::LocationFrame location;
  location.file = frame.filename;
  if (frame.pc >= frame.decoded->instructions.size())
    return location;
  const bytecode::SourcePosition& position = frame.decoded->instructions[frame.pc].position;
  if (position.line <= 0)
    return location;
  location.line = static_cast<unsigned>(position.line);
  // A column only means something on a known, single line (as in errors).
  if (position.column >= 0 && position.endLine == position.line)
    location.column = static_cast<unsigned>(position.column) + 1;
  return location;
}

} // namespace

ir::Location BytecodeMachine::nodeLocation() const {
  if (frames_.empty())
    return returnLocation_;
  std::vector<ir::LocationFrame> frames;
  frames.reserve(frames_.size());
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    frames.push_back(frameLocation(**it));
  return ir::Location(std::move(frames));
}
