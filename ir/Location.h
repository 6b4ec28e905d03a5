//===- Location.h - Where in the user's Python source a node came from -*- C++ -*-===//
//
// Capture records, for every node it makes, the Python line that made it:
// the file, line and column of the instruction executing, and, when that
// instruction ran in a function capture inlined, the lines of the calls it
// was inlined through. Passes keep it and errors after capture name it, so
// a failure in fusion or codegen points at the user's code.
//
// The text form is an optional trailing `loc(...)`, in the spirit of MLIR's
// locations: the innermost frame first, then each call site it was inlined
// through, outermost last:
//
//   %3 = aten::relu.default(%2) : tensor<f32, [8, 16]> loc("model.py":12:16)
//   %4 = aten::mul.Tensor(%3, %1) : ... loc("layers.py":4:11 at "model.py":13:12)
//
// A column of 0 (unknown) is left out: `loc("model.py":12)`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace dync::ir {

/// One frame of a location: a position in a Python file.
struct LocationFrame {
  std::string file;
  /// 1-based; 0 when unknown.
  unsigned line = 0;
  /// 1-based; 0 when unknown.
  unsigned column = 0;

  friend bool operator==(const LocationFrame&, const LocationFrame&) = default;
};

/// A node's location: empty (unknown), or frames innermost first. Cheap to
/// copy: the frames are shared and immutable.
class Location {
public:
  Location() = default;
  explicit Location(std::vector<LocationFrame> frames);

  bool empty() const { return !frames_ || frames_->empty(); }
  llvm::ArrayRef<LocationFrame> frames() const {
    return frames_ ? llvm::ArrayRef<LocationFrame>(*frames_) : llvm::ArrayRef<LocationFrame>();
  }
  /// The line that made the node. Only for a non-empty location.
  const LocationFrame& innermost() const { return frames_->front(); }

  /// The text form, `loc("model.py":12:16 at "model.py":30:9)`; nothing
  /// for an empty location.
  void print(llvm::raw_ostream& os) const;
  /// For diagnostics: `model.py:12:16`, then `, inlined from model.py:30:9`
  /// for each call site; "" for an empty location.
  std::string describe() const;
  /// " (at <describe()>)" to end an error message with, or "" when empty.
  std::string suffix() const { return empty() ? "" : " (at " + describe() + ")"; }

  friend bool operator==(const Location& a, const Location& b) { return a.frames() == b.frames(); }

private:
  std::shared_ptr<const std::vector<LocationFrame>> frames_;
};

} // namespace dync::ir
