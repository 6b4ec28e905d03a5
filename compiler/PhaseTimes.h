//===- PhaseTimes.h - Time spent in each phase of a command ---------------===//
//
// `--time-report` prints where a command spent its time, phase by phase, so
// benchmarks can separate capture from start-up and import: wall-clock time,
// and the CPU time of the whole process meanwhile, which a machine busy with
// other work inflates far less than wall-clock time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <ctime>
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
        : times_(times), phase_(phase), start_(std::chrono::steady_clock::now()),
          startCpu_(processCpuSeconds()) {}
    ~Scope() {
      times_.add(phase_,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(),
                 processCpuSeconds() - startCpu_);
    }

  private:
    PhaseTimes& times_;
    std::string phase_;
    std::chrono::steady_clock::time_point start_;
    double startCpu_;
  };

  /// The CPU time all threads of the process have used so far.
  static double processCpuSeconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
  }

  void add(llvm::StringRef phase, double seconds, double cpuSeconds);
  /// One line per phase, in the order phases first ran, then the total.
  void print(llvm::raw_ostream& os) const;

private:
  struct Phase {
    std::string name;
    double seconds;
    double cpuSeconds;
  };
  std::vector<Phase> phases_;
};

} // namespace dync::compiler
