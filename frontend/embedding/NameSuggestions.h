//===- NameSuggestions.h - "did you mean ...?" for misspelled names -------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace dync::python {

/// The candidates closest to \p name by edit distance, best first, at most
/// \p limit of them; none if nothing is close enough to be a likely typo.
/// Dunder names are only offered for a name that starts with '_'.
std::vector<std::string> closestNames(llvm::StringRef name, llvm::ArrayRef<std::string> candidates,
                                      size_t limit = 3);

/// "; did you mean 'a'?", "; did you mean 'a' or 'b'?", or "" for none.
std::string didYouMean(llvm::ArrayRef<std::string> suggestions);

} // namespace dync::python
