//===- NameSuggestions.cpp - "did you mean ...?" for misspelled names -----===//
#include "frontend/embedding/NameSuggestions.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace dync::python {

std::vector<std::string> closestNames(llvm::StringRef name, llvm::ArrayRef<std::string> candidates,
                                      size_t limit) {
  // About one edit in three characters (rounded up: a swapped pair of
  // letters is two edits) still reads as a typo; beyond that a suggestion is
  // noise.
  unsigned maxDistance = std::max<unsigned>(1, static_cast<unsigned>(name.size() + 2) / 3);
  struct Scored {
    unsigned distance;
    std::string name;
  };
  std::vector<Scored> scored;
  for (const std::string& candidate : candidates) {
    llvm::StringRef text(candidate);
    if (text == name || (text.starts_with("__") && !name.starts_with("_")))
      continue;
    // A difference only in case is the likeliest typo of all.
    unsigned distance = text.equals_insensitive(name)
                            ? 0
                            : name.edit_distance(text, /*AllowReplacements=*/true, maxDistance);
    // A name as long as the distance shares nothing with the query.
    if (distance <= maxDistance && distance < std::max(name.size(), text.size()))
      scored.push_back({distance, candidate});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.name < b.name;
  });
  std::vector<std::string> result;
  for (const Scored& entry : scored) {
    if (result.size() == limit)
      break;
    result.push_back(entry.name);
  }
  return result;
}

std::string didYouMean(llvm::ArrayRef<std::string> suggestions) {
  if (suggestions.empty())
    return "";
  std::string text = "; did you mean ";
  for (size_t i = 0; i < suggestions.size(); ++i) {
    if (i > 0)
      text += i + 1 == suggestions.size() ? " or " : ", ";
    text += "'" + suggestions[i] + "'";
  }
  return text + "?";
}

} // namespace dync::python
