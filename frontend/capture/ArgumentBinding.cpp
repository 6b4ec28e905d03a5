//===- ArgumentBinding.cpp - Arguments bound to parameter names -----------===//
#include "frontend/capture/ArgumentBinding.h"

#include "frontend/capture/Exceptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

namespace dync::capture {

llvm::Expected<std::vector<ValuePtr>> bindArguments(llvm::StringRef function,
                                                    llvm::ArrayRef<const char*> names,
                                                    size_t required, std::vector<ValuePtr> args,
                                                    KeywordArgs kwargs, std::vector<ValuePtr>* rest,
                                                    std::optional<size_t> positional) {
  std::vector<ValuePtr> bound(names.size());
  size_t byPosition = positional.value_or(names.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < byPosition)
      bound[i] = args[i];
    else if (rest)
      rest->push_back(args[i]);
    else
      return raiseBuiltin(PyExc_TypeError, function + "() takes at most " +
                                               llvm::Twine(byPosition) +
                                               " positional arguments but " +
                                               llvm::Twine(args.size()) + " were given");
  }
  for (auto& [name, value] : kwargs) {
    auto it = llvm::find_if(names, [&](const char* n) { return name == n; });
    if (it == names.end())
      return raiseBuiltin(PyExc_TypeError,
                          function + "() got an unexpected keyword argument '" + name + "'");
    size_t index = static_cast<size_t>(it - names.begin());
    if (bound[index])
      return raiseBuiltin(PyExc_TypeError,
                          function + "() got multiple values for argument '" + name + "'");
    bound[index] = value;
  }
  for (size_t i = 0; i < required; ++i)
    if (!bound[i])
      return raiseBuiltin(PyExc_TypeError,
                          function + "() missing required argument '" + names[i] + "'");
  return bound;
}

} // namespace dync::capture
