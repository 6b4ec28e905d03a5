//===- PhaseTimes.cpp - Wall-clock time spent in each phase of a command --===//
#include "compiler/PhaseTimes.h"

#include "llvm/Support/Format.h"

namespace dync::compiler {

void PhaseTimes::add(llvm::StringRef phase, double seconds) {
  for (auto& [name, total] : phases_)
    if (name == phase) {
      total += seconds;
      return;
    }
  phases_.emplace_back(phase.str(), seconds);
}

void PhaseTimes::print(llvm::raw_ostream& os) const {
  double total = 0;
  os << "dync: time report\n";
  for (const auto& [name, seconds] : phases_) {
    os << llvm::format("  %-12s %9.4f s\n", (name + ":").c_str(), seconds);
    total += seconds;
  }
  os << llvm::format("  %-12s %9.4f s\n", static_cast<const char*>("total:"), total);
}

} // namespace dync::compiler
