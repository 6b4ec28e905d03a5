//===- CpuFeatures.h - Does this CPU have what an artifact needs? ---------===//

#ifndef DYNC_RUNTIME_ARTIFACT_CPUFEATURES_H
#define DYNC_RUNTIME_ARTIFACT_CPUFEATURES_H

#include <string>
#include <string_view>
#include <vector>

namespace dync::runtime {

/// The features in `list` (comma-separated, the compiler's spelling, an
/// optional leading '+'; '-' entries name features turned off and need
/// nothing) that the running CPU lacks or that this runtime cannot test for.
/// Unknown names count as missing: running code built for a feature nobody
/// checked could fault on an illegal instruction.
std::vector<std::string> missingCpuFeatures(std::string_view list);

} // namespace dync::runtime

#endif // DYNC_RUNTIME_ARTIFACT_CPUFEATURES_H
