//===- Value.h - The symbolic values capture computes with ----------------===//
//
// What the symbolic interpreter's stack and locals hold. A value is one of a
// closed set of kinds; real Python objects appear only where they are what
// the value *is*: a constant, a fake tensor or SymInt from the oracle, or a
// read-only user object (a module, a class, an nn.Module instance). Values
// read from the frame's inputs carry their source.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"
#include "ir/Source.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dync::capture {

using ir::Source;
using ir::SourcePtr;

struct Value;
using ValuePtr = std::shared_ptr<Value>;

enum class ValueKind : uint8_t {
  /// An immutable Python object used as is: None, bool, int, float, str,
  /// bytes, Ellipsis, a code object, torch.dtype, torch.device, ...
  Constant,
  /// A fake tensor made by the oracle.
  Tensor,
  /// A torch.SymInt, SymFloat or SymBool made by the oracle.
  SymNum,
  Tuple,
  /// Mutable and shared by identity, as Python's.
  List,
  Dict,
  Set,
  /// `items` holds start, stop, step.
  Slice,
  /// `items` holds start, stop, step (constants).
  Range,
  /// Iterates `iterable`'s items (a list, tuple or dict's keys), or the
  /// values in `items` when it was produced eagerly (zip, a generator).
  Iterator,
  /// A Python function: its code, globals, defaults and closure cells.
  Function,
  /// `items[0]` is self, `items[1]` the function.
  BoundMethod,
  /// A torch.nn.Module instance, read-only.
  NNModule,
  /// Any other real object, read-only: Python modules, classes, typing
  /// constructs, objects capture does not model.
  Object,
  /// A Python builtin that capture implements itself (len, isinstance, ...).
  Builtin,
  /// A torch builtin, C function or Tensor method: the oracle runs it.
  TorchCallable,
  /// A closure cell; `cell` holds its contents (null when empty).
  Cell,
  /// The NULL that 3.11 pushes below a callable that is not a method.
  Null,
  /// `super()`: `items[0]` is the object, `object` the class it starts after.
  Super,
  /// An instance of a Python class made while capturing (a dataclass, an
  /// options object): `object` is its class, `entries` its attributes by
  /// name, in the order they were first set. It exists only in capture.
  Instance,
};

llvm::StringRef spelling(ValueKind kind);

struct Value {
  ValueKind kind;
  /// The real object: the constant, the fake tensor or SymInt, the module,
  /// function or object; the class for Super; for a Tuple, the original type
  /// when it was not a plain tuple (torch.Size).
  python::PyRef object;
  /// Where the value was read from the frame's inputs; null for values
  /// computed during capture.
  SourcePtr source;
  /// Elements of tuples, lists and sets; slice and range bounds; see the
  /// kinds above.
  std::vector<ValuePtr> items;
  /// Dict entries in insertion order; keys are constants or objects.
  std::vector<std::pair<ValuePtr, ValuePtr>> entries;
  /// Iterator: what it iterates, and where it is.
  ValuePtr iterable;
  size_t position = 0;
  /// Cell contents.
  ValuePtr cell;
  /// An Instance of a class deriving from dict or OrderedDict: its items, a
  /// Dict value (of type OrderedDict when the class derives from it) that
  /// the builtin container's methods act on (DictInstances.cpp).
  ValuePtr contents;
  /// An Instance whose `__dict__` the program read: that Dict value, which
  /// then holds the attributes (`entries` mirrors it).
  ValuePtr attributeDict;

  // Function.
  python::PyRef code;
  python::PyRef globals;
  std::string qualname;
  /// Defaults: positional ones in `items`, keyword-only ones in `entries`.
  std::vector<ValuePtr> closure;
  /// Whether the globals are the entry module's, whose reads get G[...]
  /// sources.
  bool entryGlobals = false;
  /// NNModule: a container made by slicing one capture read
  /// (`self.layers[:n]`). `object` is the real new container and `items` its
  /// children as capture read them, each keeping its own source.
  bool slicedContainer = false;
  /// List and Dict: the real list or dict this value was read from, which a
  /// change in place is replayed on after the graph when it was read through
  /// a source, and refused when not (SideEffects.cpp); null for containers
  /// made while capturing.
  python::PyRef realContainer;
  /// List: a caller's list read through `source` whose items the program
  /// has not read (SideEffects.cpp, "appends only"): `items` holds only
  /// what it appended, which is replayed as an `extend` after the graph.
  /// The first read of the list reads the real items, pins the length and
  /// puts them before the appended ones (ValueBuilder::readUnreadLists).
  bool unreadItems = false;
  /// Object: a class given by `type(obj)` or `obj.__class__` for an object
  /// read through this source; its attributes are read as `type(SRC).NAME`
  /// (ValueBuilder::classOfSource), so they are guarded.
  SourcePtr classOf;

  explicit Value(ValueKind kind) : kind(kind) {}

  bool is(ValueKind k) const { return kind == k; }
  bool isConstant() const { return kind == ValueKind::Constant; }
  bool isNone() const { return kind == ValueKind::Constant && object.get() == Py_None; }
  bool isTensor() const { return kind == ValueKind::Tensor; }
  bool isSequence() const { return kind == ValueKind::Tuple || kind == ValueKind::List; }
  /// The real Python object this value stands for, or null when capture
  /// models the value itself (containers, iterators, functions and objects
  /// made during capture): identity and type of the former are the real
  /// object's.
  PyObject* realObject() const;
};

/// Constructors for the common kinds.
ValuePtr makeValue(ValueKind kind, python::PyRef object = {}, SourcePtr source = nullptr);
ValuePtr makeConstant(python::PyRef object, SourcePtr source = nullptr);
/// Steals a new reference; null \p object gives null.
ValuePtr makeConstantSteal(PyObject* object);
ValuePtr makeNone();
ValuePtr makeBool(bool value);
ValuePtr makeInt(long long value);
ValuePtr makeTuple(std::vector<ValuePtr> items);
ValuePtr makeList(std::vector<ValuePtr> items);
ValuePtr makeIterator(ValuePtr iterable);
/// An iterator over values computed up front.
ValuePtr makeEagerIterator(std::vector<ValuePtr> items);
ValuePtr makeCell(ValuePtr contents);

/// Whether CPython can compute with \p value as it is: a constant, a
/// symbolic number, a read-only object, or containers of those. A tensor
/// anywhere inside makes it unknown: its values are not known while
/// capturing.
bool isKnown(const ValuePtr& value);
/// Whether every value (deeply, through tuples and lists) is a constant.
bool allConstant(llvm::ArrayRef<ValuePtr> values);
/// The same, where a module is allowed too.
bool allConstantOrModules(llvm::ArrayRef<ValuePtr> values);

} // namespace dync::capture
