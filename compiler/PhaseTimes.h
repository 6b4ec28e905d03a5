//===- PhaseTimes.h - Wall-clock time spent in each phase of a command ----===//
//
// `--time-report` prints where a command spent its time, phase by phase, so
// benchmarks can separate capture from start-up and import.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace dync::compiler {

class PhaseTimes {
public:
  /// Times the rest of the enclosing scope under \p phase; repeated phases
  /// add up.
  class Scope {
  public:
    Scope(PhaseTimes& times, llvm::StringRef phase)
        : times_(times), phase_(phase), start_(std::chrono::steady_clock::now()) {}
    ~Scope() {
      times_.add(phase_,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }

  private:
    PhaseTimes& times_;
    std::string phase_;
    std::chrono::steady_clock::time_point start_;
  };

  void add(llvm::StringRef phase, double seconds);
  /// One line per phase, in the order phases first ran, then the total.
  void print(llvm::raw_ostream& os) const;

private:
  std::vector<std::pair<std::string, double>> phases_;
};

} // namespace dync::compiler
