//===- Argument.cpp - Operands of graph nodes -----------------------------===//
#include "ir/Argument.h"

#include "ir/Graph.h"
#include "ir/Syntax.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dync::ir {

Argument Argument::value(Node* node, std::optional<unsigned> index) {
  Argument a;
  a.kind_ = Kind::Value;
  a.data_ = ValueRef{node, index};
  return a;
}

Argument Argument::sym(SymExpr value) {
  Argument a;
  a.kind_ = Kind::Sym;
  a.data_ = value;
  return a;
}

Argument Argument::floating(double value) {
  Argument a;
  a.kind_ = Kind::Float;
  a.data_ = value;
  return a;
}

Argument Argument::complex(std::complex<double> value) {
  Argument a;
  a.kind_ = Kind::Complex;
  a.data_ = value;
  return a;
}

Argument Argument::boolean(bool value) {
  Argument a;
  a.kind_ = Kind::Bool;
  a.data_ = value;
  return a;
}

Argument Argument::string(std::string value) {
  Argument a;
  a.kind_ = Kind::String;
  a.data_ = std::move(value);
  return a;
}

Argument Argument::dtype(DType value) {
  Argument a;
  a.kind_ = Kind::DType;
  a.data_ = value;
  return a;
}

Argument Argument::device(Device value) {
  Argument a;
  a.kind_ = Kind::Device;
  a.data_ = value;
  return a;
}

Argument Argument::layout(Layout value) {
  Argument a;
  a.kind_ = Kind::Layout;
  a.data_ = value;
  return a;
}

Argument Argument::memoryFormat(MemoryFormat value) {
  Argument a;
  a.kind_ = Kind::MemoryFormat;
  a.data_ = value;
  return a;
}

Argument Argument::list(std::vector<Argument> elements) {
  Argument a;
  a.kind_ = Kind::List;
  a.data_ = std::move(elements);
  return a;
}

Argument Argument::tuple(std::vector<Argument> elements) {
  Argument a;
  a.kind_ = Kind::Tuple;
  a.data_ = std::move(elements);
  return a;
}

Argument Argument::typedTuple(std::string module, std::string qualname,
                              std::vector<Argument> elements) {
  Argument a = tuple(std::move(elements));
  a.tupleModule_ = std::move(module);
  a.tupleQualname_ = std::move(qualname);
  return a;
}

Argument Argument::dict(std::vector<Argument> keys, std::vector<Argument> values) {
  Argument a;
  a.kind_ = Kind::Dict;
  a.data_ = std::move(values);
  a.keys_ = std::move(keys);
  return a;
}

Argument Argument::typedDict(std::string module, std::string qualname, std::vector<Argument> keys,
                             std::vector<Argument> values) {
  Argument a = dict(std::move(keys), std::move(values));
  a.tupleModule_ = std::move(module);
  a.tupleQualname_ = std::move(qualname);
  return a;
}

Argument Argument::object(std::string module, std::string qualname, std::vector<std::string> names,
                          std::vector<Argument> values, std::vector<Argument> itemKeys,
                          std::vector<Argument> itemValues) {
  Argument a;
  a.kind_ = Kind::Object;
  values.insert(values.end(), std::make_move_iterator(itemValues.begin()),
                std::make_move_iterator(itemValues.end()));
  a.data_ = std::move(values);
  a.attributes_ = std::move(names);
  a.holdsItems_ = !itemKeys.empty();
  a.keys_ = std::move(itemKeys);
  a.tupleModule_ = std::move(module);
  a.tupleQualname_ = std::move(qualname);
  return a;
}

Argument Argument::named(std::string module, std::string qualname) {
  Argument a;
  a.kind_ = Kind::Named;
  a.tupleModule_ = std::move(module);
  a.tupleQualname_ = std::move(qualname);
  return a;
}

void Argument::forEachValue(llvm::function_ref<void(const ValueRef&)> fn) const {
  if (kind_ == Kind::Value)
    fn(valueRef());
  else if (isContainer())
    for (const Argument& element : elements())
      element.forEachValue(fn);
}

void Argument::forEachValue(llvm::function_ref<void(ValueRef&)> fn) {
  if (kind_ == Kind::Value)
    fn(valueRef());
  else if (isContainer())
    for (Argument& element : elements())
      element.forEachValue(fn);
}

void Argument::forEachSym(llvm::function_ref<void(SymExpr)> fn) const {
  if (kind_ == Kind::Sym)
    fn(symValue());
  else if (isContainer())
    for (const Argument& element : elements())
      element.forEachSym(fn);
}

void printFloat(llvm::raw_ostream& os, double value) {
  if (std::isnan(value)) {
    os << "nan";
    return;
  }
  if (std::isinf(value)) {
    os << (value < 0 ? "-inf" : "inf");
    return;
  }
  char text[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof(text), "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  llvm::StringRef spelled(text);
  os << spelled;
  // Without a point or exponent it would read back as an integer.
  if (spelled.find_first_of(".e") == llvm::StringRef::npos)
    os << ".0";
}

/// One part of a typed tuple's `module:qualname`, spelled as type guards
/// spell theirs: bare when made of `[A-Za-z0-9_.$<>]`, else quoted.
static void printTypeNamePart(llvm::raw_ostream& os, llvm::StringRef part) {
  if (isBareGraphName(part))
    os << part;
  else
    printQuoted(os, part);
}

void Argument::print(llvm::raw_ostream& os) const {
  switch (kind_) {
  case Kind::Value:
    if (!valueRef().node) {
      os << "%<<null>>";
      return;
    }
    os << '%' << valueRef().node->name();
    if (valueRef().index)
      os << '#' << *valueRef().index;
    return;
  case Kind::Sym:
    os << symValue();
    return;
  case Kind::Float:
    printFloat(os, floatValue());
    return;
  case Kind::Complex:
    os << "complex(";
    printFloat(os, complexValue().real());
    os << ", ";
    printFloat(os, complexValue().imag());
    os << ')';
    return;
  case Kind::Bool:
    os << (boolValue() ? "true" : "false");
    return;
  case Kind::None:
    os << "none";
    return;
  case Kind::String:
    printQuoted(os, stringValue());
    return;
  case Kind::DType:
    os << spelling(dtypeValue());
    return;
  case Kind::Device:
    deviceValue().print(os);
    return;
  case Kind::Layout:
    os << spelling(layoutValue());
    return;
  case Kind::MemoryFormat:
    os << spelling(memoryFormatValue());
    return;
  case Kind::List:
  case Kind::Tuple: {
    bool isList = kind_ == Kind::List;
    if (hasTupleType()) {
      printTypeNamePart(os, tupleModule_);
      os << ':';
      printTypeNamePart(os, tupleQualname_);
    }
    os << (isList ? '[' : '(');
    llvm::interleaveComma(elements(), os, [&](const Argument& a) { a.print(os); });
    // A one-element tuple needs its comma, as in Python: `(%a)` is just `%a`.
    // A typed one is not parenthesized, so it reads as one without.
    if (!isList && !hasTupleType() && elements().size() == 1)
      os << ',';
    os << (isList ? ']' : ')');
    return;
  }
  case Kind::Named:
    os << "named ";
    printTypeNamePart(os, tupleModule_);
    if (!tupleQualname_.empty()) {
      os << ':';
      printTypeNamePart(os, tupleQualname_);
    }
    return;
  case Kind::Dict:
  case Kind::Object: {
    bool isObject = kind_ == Kind::Object;
    if (isObject)
      os << "object ";
    if (hasTypeName()) {
      printTypeNamePart(os, tupleModule_);
      os << ':';
      printTypeNamePart(os, tupleQualname_);
    }
    os << '{';
    size_t fields = isObject ? attributes_.size() : elements().size();
    for (size_t i = 0; i < fields; ++i) {
      if (i)
        os << ", ";
      if (isObject) {
        // Attribute names are identifiers, quoted when they are not
        // (setattr accepts any string).
        if (isIdentifier(attributes_[i]))
          os << attributes_[i];
        else
          printQuoted(os, attributes_[i]);
        os << " = ";
      } else {
        keys_[i].print(os);
        os << ": ";
      }
      elements()[i].print(os);
    }
    os << '}';
    // An object of a dict class: its items, `{"logits": %3}`.
    if (isObject && holdsItems_) {
      os << '{';
      for (size_t i = 0; i < keys_.size(); ++i) {
        if (i)
          os << ", ";
        keys_[i].print(os);
        os << ": ";
        elements()[fields + i].print(os);
      }
      os << '}';
    }
    return;
  }
  }
}

} // namespace dync::ir
