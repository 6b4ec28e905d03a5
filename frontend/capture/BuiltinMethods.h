//===- BuiltinMethods.h - Methods of builtin types over symbolic values ---===//
//
// `d.pop("k", None)`, `xs.insert(0, t)`, `"a,b".split(",")`, `(7).bit_length()`:
// the methods of dict, list, tuple, set, frozenset, str, int and float run
// through CPython's own method objects. The receiver and arguments are made
// real for the call: constants as they are, containers as new real
// containers of their items, and everything capture holds symbolically (a
// tensor, an object made while capturing, a function) as a stand-in object
// whose comparisons, hash, truth and calls come back to the interpreter. The
// result is read back the same way, stand-ins becoming the values they stood
// for, and a method that changes its receiver has the receiver's new items
// written back. Which methods change their receiver is a table
// (BuiltinMethods.def).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace dync::capture {

class BuiltinContext;
class SemanticsContext;

/// Registers every method of the table as a builtin of \p interp, and checks
/// the table against the running interpreter's types.
llvm::Error registerBuiltinMethods(BuiltinContext& interp);

/// `base.name` where \p base is a constant whose type the table covers (str,
/// int, float, bool, frozenset): a method bound to it, or a data attribute
/// (`real`, `numerator`) read for real. None when the table does not cover
/// the type or the name is not a public attribute of it.
std::optional<llvm::Expected<ValuePtr>>
constantMethodAttr(SemanticsContext& cx, const ValuePtr& base, llvm::StringRef name);

/// Calls \p callable, a C function of the table reached as a real object
/// (`dict.fromkeys` read from the class, `str.maketrans`, a bound method of
/// a constant); none when it is not one.
std::optional<llvm::Expected<ValuePtr>> callTableFunction(BuiltinContext& interp,
                                                          PyObject* callable,
                                                          const std::vector<ValuePtr>& args,
                                                          const KeywordArgs& kwargs);

/// Calls the real builtin \p callable on values capture holds, made real as
/// the methods' receivers and arguments are (see above); for builtins such
/// as `sorted` that call back into what they are given (a key function).
/// \p makesText: the call makes text (`repr`), so a symbolic number's text is
/// refused rather than spelled as its symbol.
llvm::Expected<ValuePtr> callWithRealValues(BuiltinContext& interp, PyObject* callable,
                                            const std::vector<ValuePtr>& args,
                                            const KeywordArgs& kwargs, bool makesText = false);

} // namespace dync::capture
