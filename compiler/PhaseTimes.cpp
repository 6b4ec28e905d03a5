//===- PhaseTimes.cpp - Time spent in each phase of a command -------------===//
#include "compiler/PhaseTimes.h"

#include "llvm/Support/Format.h"

namespace dync::compiler {

void PhaseTimes::add(llvm::StringRef phase, double seconds, double cpuSeconds) {
  for (Phase& known : phases_)
    if (known.name == phase) {
      known.seconds += seconds;
      known.cpuSeconds += cpuSeconds;
      return;
    }
  phases_.push_back({phase.str(), seconds, cpuSeconds});
}

void PhaseTimes::print(llvm::raw_ostream& os) const {
  double total = 0;
  double totalCpu = 0;
  os << "dync: time report (wall-clock, and the process's CPU time)\n";
  for (const Phase& phase : phases_) {
    os << llvm::format("  %-12s %9.4f s  (CPU %9.4f s)\n", (phase.name + ":").c_str(),
                       phase.seconds, phase.cpuSeconds);
    total += phase.seconds;
    totalCpu += phase.cpuSeconds;
  }
  os << llvm::format("  %-12s %9.4f s  (CPU %9.4f s)\n", static_cast<const char*>("total:"), total,
                     totalCpu);
}

} // namespace dync::compiler
