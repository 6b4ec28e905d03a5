//===- Guard.h - What capture assumed about its inputs --------------------===//
//
// A guard is one assumption a captured graph was built under, recorded
// against the source of the value it is about. Guards are data: a kind, a
// source and a payload; they are printed for `--emit=guards` and later
// compiled to native checks. Symbolic-size assumptions are not here: they are
// the graph's symbols and relations.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Source.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace dync::capture {

enum class GuardKind : uint8_t {
  /// The value's Python type is exactly this type (payload: module.qualname).
  TypeMatch,
  /// The value equals this constant (payload: its repr).
  EqualsMatch,
  /// The value is this very object, as for None (payload: its repr).
  IdMatch,
  /// A tensor's dtype, device, sizes and requires_grad (payload: those,
  /// as the graph spells them).
  TensorMatch,
  /// Process-wide state that changes what torch computes (payload:
  /// `grad_mode=true`); no source.
  GlobalState,
  /// The torch and Python versions capture ran under; no source.
  Version,
};

llvm::StringRef spelling(GuardKind kind);

struct Guard {
  GuardKind kind;
  /// Null for guards that concern no frame value.
  SourcePtr source;
  std::string payload;

  /// `TENSOR_MATCH L['x'] f32 [s0, 784] requires_grad=false`.
  void print(llvm::raw_ostream& os) const;
};

/// Guards in the order first recorded, each (kind, source) at most once.
class GuardSet {
public:
  /// Records \p guard unless one of its kind on the same source exists.
  void add(Guard guard);
  const std::vector<Guard>& guards() const { return guards_; }
  /// One guard per line.
  void print(llvm::raw_ostream& os) const;

private:
  std::vector<Guard> guards_;
};

} // namespace dync::capture
