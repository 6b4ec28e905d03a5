//===- ObjectSemantics.h - Python's operations over values ------*- C++ -*-===//
//
// Attribute and item reads, truth, iteration, `len`, operators, identity
// and `in` over symbolic values, each decided by the kinds of its operands:
// constants and SymInts go through CPython's own C API, tensors through the
// oracle, containers are handled structurally. It sees capture only
// through a SemanticsContext; the interpreter owns one and forwards its
// own getAttr, getItem, ... to it. Files by concern: AttributeReads.cpp,
// ItemReads.cpp, TruthAndIteration.cpp, Operators.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/SemanticsContext.h"
#include "frontend/capture/Value.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace dync::capture {

class ObjectSemantics {
public:
  explicit ObjectSemantics(SemanticsContext& context) : cx_(context) {}

  SemanticsContext& context() { return cx_; }

  // ---- attributes (AttributeReads.cpp) ----
  llvm::Expected<ValuePtr> getAttr(const ValuePtr& base, llvm::StringRef name);
  /// An attribute of an nn.Module: its instance dict, then nn.Module's
  /// tables, then its class, each read with its source.
  llvm::Expected<ValuePtr> moduleAttr(const ValuePtr& module, llvm::StringRef name);
  /// \p name in nn.Module \p module's instance dict \p dict (unless
  /// \p tablesOnly), then in its tables (unless \p ownOnly), as the
  /// program left them; nothing when none holds it.
  llvm::Expected<std::optional<ValuePtr>> moduleDictRead(const ValuePtr& module, PyObject* dict,
                                                         PyObject* name, bool tablesOnly = false,
                                                         bool ownOnly = false);
  /// `nn.Module.__getattr__(module, name)` called by the program itself
  /// (`self.__getattr__(head)`): \p name from the module's parameter,
  /// buffer and submodule tables as the program left them, each read with
  /// its source, as that function reads them; else AttributeError.
  llvm::Expected<ValuePtr> moduleTableAttr(const ValuePtr& module, llvm::StringRef name);
  /// \p type's __getattr__ when it is a Python function other than
  /// nn.Module's (a wrapper forwarding reads), else null.
  PyObject* classGetattr(PyTypeObject* type);

  // ---- items (ItemReads.cpp) ----
  llvm::Expected<ValuePtr> getItem(const ValuePtr& base, const ValuePtr& key);

  // ---- truth, iteration, length (TruthAndIteration.cpp) ----
  /// bool(value); a tensor is a data-dependent branch.
  llvm::Expected<bool> truth(const ValuePtr& value);
  /// The values iterating \p value gives, all at once.
  llvm::Expected<std::vector<ValuePtr>> unpack(const ValuePtr& value);
  llvm::Expected<ValuePtr> iter(const ValuePtr& value);
  /// The next value, or null when exhausted.
  llvm::Expected<ValuePtr> next(const ValuePtr& iterator);
  llvm::Expected<ValuePtr> length(const ValuePtr& value);

  // ---- operators, identity, `in` (Operators.cpp) ----
  /// Binary operator by its symbol ("+", "+=", "@", ...).
  llvm::Expected<ValuePtr> binary(llvm::StringRef symbol, const ValuePtr& a, const ValuePtr& b);
  /// Comparison by its symbol ("<", "==", ...).
  llvm::Expected<ValuePtr> compare(llvm::StringRef symbol, const ValuePtr& a, const ValuePtr& b);
  llvm::Expected<ValuePtr> unary(llvm::StringRef operatorName, const ValuePtr& a);
  /// `a is b`: the same value, or values of the same real object.
  llvm::Expected<bool> identical(const ValuePtr& a, const ValuePtr& b);
  /// identical() where only the value builder is at hand, which guards the
  /// answer for two objects read through sources.
  static llvm::Expected<bool> identical(ValueBuilder& values, const ValuePtr& a, const ValuePtr& b);
  llvm::Expected<bool> contains(const ValuePtr& container, const ValuePtr& item);
  /// `item in tensor`: whether any element equals \p item, a decision on data.
  llvm::Expected<bool> tensorContains(const ValuePtr& tensor, const ValuePtr& item);
  /// Adds \p item to the set value \p set unless an equal item is in it.
  llvm::Error addToSet(const ValuePtr& set, ValuePtr item);

private:
  /// `object.name` for a user object read through a source (an instance of
  /// a Python class) when its class provides `name`: a property's getter
  /// runs symbolically and a method is bound to the class's function read
  /// through a guarded `type(...)` source. Nothing when the plain read
  /// applies.
  llvm::Expected<std::optional<ValuePtr>> userObjectClassRead(const ValuePtr& object,
                                                              llvm::StringRef name);
  llvm::Expected<ValuePtr> tensorAttr(const ValuePtr& tensor, llvm::StringRef name);

  SemanticsContext& cx_;
};

} // namespace dync::capture
