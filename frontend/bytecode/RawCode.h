//===- RawCode.h - The byte-level fields of a code object ------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace dync::bytecode {

/// The fields of a code object that the toolkit decodes and re-encodes, as
/// bytes. Everything else (names, constants, flags) passes through untouched.
struct RawCode {
  std::vector<uint8_t> code;           ///< co_code (caches zeroed, unspecialized)
  std::vector<uint8_t> exceptionTable; ///< co_exceptiontable
  std::vector<uint8_t> lineTable;      ///< co_linetable
  int firstLine = 0;                   ///< co_firstlineno
  int stackSize = 0;                   ///< co_stacksize
};

} // namespace dync::bytecode
