//===- Guard.cpp - What capture assumed about its inputs ------------------===//
#include "frontend/capture/Guard.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::capture {

llvm::StringRef spelling(GuardKind kind) {
  switch (kind) {
  case GuardKind::TypeMatch:
    return "TYPE_MATCH";
  case GuardKind::EqualsMatch:
    return "EQUALS_MATCH";
  case GuardKind::IdMatch:
    return "ID_MATCH";
  case GuardKind::TensorMatch:
    return "TENSOR_MATCH";
  case GuardKind::GlobalState:
    return "GLOBAL_STATE";
  case GuardKind::Version:
    return "VERSION";
  }
  return "?";
}

void Guard::print(llvm::raw_ostream& os) const {
  os << spelling(kind);
  if (source) {
    os << ' ';
    source->print(os);
  }
  if (!payload.empty())
    os << ' ' << payload;
}

void GuardSet::add(Guard guard) {
  std::string key = guard.source ? guard.source->str() : "";
  bool present = llvm::any_of(guards_, [&](const Guard& g) {
    if (g.kind != guard.kind)
      return false;
    if (!guard.source)
      return !g.source && g.payload == guard.payload;
    return g.source && g.source->str() == key;
  });
  if (!present)
    guards_.push_back(std::move(guard));
}

void GuardSet::print(llvm::raw_ostream& os) const {
  for (const Guard& guard : guards_) {
    guard.print(os);
    os << '\n';
  }
}

} // namespace dync::capture
