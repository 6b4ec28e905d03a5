//===- MappingProxies.h - mappingproxy values over dicts --------*- C++ -*-===//
//
// `types.MappingProxyType(d)` over a dict the program made is a value that
// views the dict (MappingProxies.cpp); reads through it are reads of the
// dict.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/ADT/StringRef.h"

namespace dync::capture {

/// The dict a mappingproxy value views, or null when \p value is not one.
ValuePtr mappingProxyTarget(const ValuePtr& value);
/// Whether \p name is a method of a mappingproxy that reads its dict.
bool isMappingProxyRead(llvm::StringRef name);

} // namespace dync::capture
