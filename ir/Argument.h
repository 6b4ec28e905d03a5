//===- Argument.h - Operands of graph nodes --------------------*- C++ -*-===//
//
// What a call passes to an ATen operator and what a graph returns: a value
// defined by a node (or one element of a node's tuple or list result), a
// literal (int and symbolic int alike, float, bool, None, string, dtype,
// device, layout, memory format), or a list or tuple of those. This is the value language of ATen
// schemas, so any overload's arguments fit without a per-operator format.
//
// A returned tuple may name the Python type it is an instance of when that
// is not `tuple` (a structseq such as torch.return_types.max, torch.Size, a
// named tuple class), so the caller gets back the type the function
// returned: `torch.return_types:max(%3#0, %3#1)`. A returned value may also
// be a dict, `{"logits": %3, 0: none}`, of a named dict type when it is
// not `dict` (`collections:OrderedDict{"a": %3}`), or an object of a class
// with its attributes in the order they were set
// (`object model:Out{logits = %3, loss = none}`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/SymExpr.h"
#include "ir/TensorAttributes.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <complex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dync::ir {

class Node;

/// A use of a value: `%3` is the whole result of node %3, `%3#1` element 1 of
/// its tuple or list result.
struct ValueRef {
  Node* node = nullptr;
  std::optional<unsigned> index;

  friend bool operator==(const ValueRef&, const ValueRef&) = default;
};

class Argument {
public:
  enum class Kind : uint8_t {
    Value,
    Sym,
    Float,
    /// A complex number (`complex(0.0, 1.0)`): a Python complex passed for
    /// a Scalar.
    Complex,
    Bool,
    None,
    String,
    DType,
    Device,
    Layout,
    MemoryFormat,
    List,
    Tuple,
    /// Keys (literals) in dictKeys(), values in elements().
    Dict,
    /// An object of a named class: attribute names in attributeNames(),
    /// values in elements().
    Object,
    /// An object the rewritten code imports by name: a class, a function,
    /// an enum member or a module (typeModule(), typeQualname(); the
    /// qualified name is empty for a module).
    Named
  };

  /// `none`.
  Argument() = default;
  static Argument value(Node* node, std::optional<unsigned> index = std::nullopt);
  /// An integer: a constant like `1` or a symbolic one like `2*s0`.
  static Argument sym(SymExpr value);
  static Argument floating(double value);
  static Argument complex(std::complex<double> value);
  static Argument boolean(bool value);
  static Argument none() { return Argument(); }
  static Argument string(std::string value);
  static Argument dtype(DType value);
  static Argument device(Device value);
  static Argument layout(Layout value);
  static Argument memoryFormat(MemoryFormat value);
  static Argument list(std::vector<Argument> elements);
  static Argument tuple(std::vector<Argument> elements);
  /// A tuple that is an instance of the tuple subclass \p qualname of the
  /// module \p module, the way type guards name types (ir/Guard.h).
  static Argument typedTuple(std::string module, std::string qualname,
                             std::vector<Argument> elements);

  Kind kind() const { return kind_; }
  bool isValue() const { return kind_ == Kind::Value; }

  const ValueRef& valueRef() const { return std::get<ValueRef>(data_); }
  ValueRef& valueRef() { return std::get<ValueRef>(data_); }
  SymExpr symValue() const { return std::get<SymExpr>(data_); }
  double floatValue() const { return std::get<double>(data_); }
  std::complex<double> complexValue() const { return std::get<std::complex<double>>(data_); }
  bool boolValue() const { return std::get<bool>(data_); }
  const std::string& stringValue() const { return std::get<std::string>(data_); }
  DType dtypeValue() const { return std::get<DType>(data_); }
  Device deviceValue() const { return std::get<Device>(data_); }
  Layout layoutValue() const { return std::get<Layout>(data_); }
  MemoryFormat memoryFormatValue() const { return std::get<MemoryFormat>(data_); }
  /// Elements of a list or tuple.
  const std::vector<Argument>& elements() const { return std::get<std::vector<Argument>>(data_); }
  std::vector<Argument>& elements() { return std::get<std::vector<Argument>>(data_); }
  /// Whether this is a tuple of a named type other than `tuple`.
  bool hasTupleType() const { return kind_ == Kind::Tuple && !tupleModule_.empty(); }
  /// The module and qualified name of a typed tuple's type; empty otherwise.
  const std::string& tupleTypeModule() const { return tupleModule_; }
  const std::string& tupleTypeQualname() const { return tupleQualname_; }

  /// A dict `{k: v, ...}`: \p keys are literals (strings, ints, bools, none,
  /// floats), one per value, in insertion order.
  static Argument dict(std::vector<Argument> keys, std::vector<Argument> values);
  /// A dict that is an instance of the dict subclass \p qualname of module
  /// \p module (collections:OrderedDict).
  static Argument typedDict(std::string module, std::string qualname, std::vector<Argument> keys,
                            std::vector<Argument> values);
  /// An object of class \p qualname of module \p module whose instance
  /// attributes are \p names, set in that order, holding \p values; an
  /// object of a class deriving from dict also holds the items \p itemKeys
  /// (literals, as a dict's keys) to \p itemValues, in insertion order.
  /// elements() holds the attribute values, then the item values.
  static Argument object(std::string module, std::string qualname, std::vector<std::string> names,
                         std::vector<Argument> values, std::vector<Argument> itemKeys = {},
                         std::vector<Argument> itemValues = {});
  /// The object \p qualname (dotted attributes) of module \p module, or
  /// the module itself when \p qualname is empty: `named builtins:FutureWarning`,
  /// `named enum_mod:Color.RED`, `named torch.nn.functional`.
  static Argument named(std::string module, std::string qualname);
  /// Whether elements() holds nested arguments: a list, tuple, dict or
  /// object.
  bool isContainer() const {
    return kind_ == Kind::List || kind_ == Kind::Tuple || kind_ == Kind::Dict ||
           kind_ == Kind::Object;
  }
  /// Whether this is a dict or object with a named type (for objects and
  /// named objects, always); then typeModule() and typeQualname() name it.
  bool hasTypeName() const { return !tupleModule_.empty(); }
  const std::string& typeModule() const { return tupleModule_; }
  const std::string& typeQualname() const { return tupleQualname_; }
  /// A dict's keys, one per element; an object's item keys, one per
  /// element after its attributes.
  const std::vector<Argument>& dictKeys() const { return keys_; }
  /// An object's attribute names, one per element before its items.
  const std::vector<std::string>& attributeNames() const { return attributes_; }
  /// Whether this is an object that holds dict items (an object of a class
  /// deriving from dict with at least one item); printed as a second
  /// `{...}`.
  bool hasItems() const { return kind_ == Kind::Object && holdsItems_; }

  /// Calls \p fn on every value use inside, in lists and tuples too.
  void forEachValue(llvm::function_ref<void(const ValueRef&)> fn) const;
  void forEachValue(llvm::function_ref<void(ValueRef&)> fn);
  /// Calls \p fn on every symbolic integer inside.
  void forEachSym(llvm::function_ref<void(SymExpr)> fn) const;

  /// `%3#1`, `2*s0`, `1e-05`, `true`, `none`, `"tanh"`, `f16`, `cuda:0`,
  /// `strided`, `contiguous_format`, `[%a, %b]`, `(%a,)`,
  /// `torch.return_types:max(%a, %b)`, `{"a": %a}`,
  /// `collections:OrderedDict{"a": %a}`, `object model:Out{logits = %a}`,
  /// `named builtins:FutureWarning`.
  void print(llvm::raw_ostream& os) const;

private:
  Kind kind_ = Kind::None;
  std::variant<std::monostate, ValueRef, SymExpr, double, std::complex<double>, bool, std::string,
               DType, Device, Layout, MemoryFormat, std::vector<Argument>>
      data_;
  /// A typed tuple's, typed dict's or object's type; both empty for
  /// everything else.
  std::string tupleModule_;
  std::string tupleQualname_;
  /// A dict's keys.
  std::vector<Argument> keys_;
  /// An object's attribute names.
  std::vector<std::string> attributes_;
  /// See hasItems().
  bool holdsItems_ = false;
};

/// `name=value` after the positional arguments of a call.
struct KeywordArgument {
  std::string name;
  Argument value;
};

/// Prints a float so that it reads back as the same double: the shortest
/// decimal that does, always with a `.` or an exponent; `inf`, `-inf`, `nan`.
void printFloat(llvm::raw_ostream& os, double value);

} // namespace dync::ir
