//===- CpuFeatures.cpp - Does this CPU have what an artifact needs? -------===//

#include "runtime/artifact/CpuFeatures.h"

namespace dync::runtime {

namespace {

// __builtin_cpu_supports needs a string literal, hence one case per name.
// codegen/TargetSpec.cpp records only names listed here.
// Returns -1 for a name this runtime cannot test.
int hostSupports(std::string_view name) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
#define DYNC_CPU_FEATURE(spelling)                                                                 \
  if (name == spelling)                                                                            \
    return __builtin_cpu_supports(spelling) ? 1 : 0;
  DYNC_CPU_FEATURE("cmov")
  DYNC_CPU_FEATURE("mmx")
  DYNC_CPU_FEATURE("popcnt")
  DYNC_CPU_FEATURE("sse")
  DYNC_CPU_FEATURE("sse2")
  DYNC_CPU_FEATURE("sse3")
  DYNC_CPU_FEATURE("ssse3")
  DYNC_CPU_FEATURE("sse4.1")
  DYNC_CPU_FEATURE("sse4.2")
  DYNC_CPU_FEATURE("sse4a")
  DYNC_CPU_FEATURE("avx")
  DYNC_CPU_FEATURE("avx2")
  DYNC_CPU_FEATURE("fma")
  DYNC_CPU_FEATURE("fma4")
  DYNC_CPU_FEATURE("xop")
  DYNC_CPU_FEATURE("f16c")
  DYNC_CPU_FEATURE("bmi")
  DYNC_CPU_FEATURE("bmi2")
  DYNC_CPU_FEATURE("lzcnt")
  DYNC_CPU_FEATURE("movbe")
  DYNC_CPU_FEATURE("adx")
  DYNC_CPU_FEATURE("aes")
  DYNC_CPU_FEATURE("pclmul")
  DYNC_CPU_FEATURE("sha")
  DYNC_CPU_FEATURE("vaes")
  DYNC_CPU_FEATURE("avx512f")
  DYNC_CPU_FEATURE("avx512vl")
  DYNC_CPU_FEATURE("avx512bw")
  DYNC_CPU_FEATURE("avx512dq")
  DYNC_CPU_FEATURE("avx512cd")
  DYNC_CPU_FEATURE("avx512vbmi")
  DYNC_CPU_FEATURE("avx512ifma")
  DYNC_CPU_FEATURE("avx512vbmi2")
  DYNC_CPU_FEATURE("avx512vnni")
  DYNC_CPU_FEATURE("avx512bitalg")
  DYNC_CPU_FEATURE("avx512vpopcntdq")
  DYNC_CPU_FEATURE("avx512bf16")
  DYNC_CPU_FEATURE("avx512fp16")
  DYNC_CPU_FEATURE("gfni")
  DYNC_CPU_FEATURE("vpclmulqdq")
  DYNC_CPU_FEATURE("avxvnni")
  DYNC_CPU_FEATURE("amx-tile")
  DYNC_CPU_FEATURE("amx-int8")
  DYNC_CPU_FEATURE("amx-bf16")
#undef DYNC_CPU_FEATURE
#endif
  return -1;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

} // namespace

std::vector<std::string> missingCpuFeatures(std::string_view list) {
  std::vector<std::string> missing;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty() || item.front() == '-')
      continue;
    if (item.front() == '+')
      item.remove_prefix(1);
    if (hostSupports(item) != 1)
      missing.emplace_back(item);
  }
  return missing;
}

} // namespace dync::runtime
