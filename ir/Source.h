//===- Source.h - Where a graph input or guarded value lives in the frame -===//
//
// A source is the Python expression that reads a value again from a frame:
// `L['x']`, `L['self']._modules['fc']._parameters['weight']`, `G['scale']`.
// Graph inputs and guards are named by sources (decision 4); the rewritten
// bytecode evaluates them with LOAD_FAST/LOAD_GLOBAL, LOAD_ATTR and
// BINARY_SUBSCR, and guards evaluate them natively, so a source must mean
// the same thing in both and must not run Python-level code:
//
//   L['name']    the frame local `name` (an argument, when guards run)
//   G['name']    the key `name` of the frame's globals dict
//   base.name    the key `name` of base's instance `__dict__` (never a
//                descriptor, property or __getattr__: capture spells
//                nn.Module parameters, buffers and submodules as the
//                dictionary reads they are, `._parameters['weight']`)
//   base[i]      base[i] with the int i, as Python's subscript reads it:
//                item i of an exact list or tuple (negative counts from
//                the end), or the value under the int key i of a dict
//   base['key']  the value under the str key of a dict
//   base[K]      the value under the key K of a dict, K a constant of
//                another type written as Python writes it: True, None,
//                1.5, (0, 'a') (a tuple of these, ints and strs). A dict
//                key read this way is an exact int, str, bool, float
//                (finite) or None, or an exact tuple of those
//   list(base.values())[i]
//                the value at position i (not negative) of an exact dict
//                or collections.OrderedDict, in its iteration order
//                (nn.Module's hook tables, keyed by handle ids that
//                differ from process to process)
//   list(base)[i]
//                the key at that position
//   M['name']    the module `name` in sys.modules (torch's global hook
//                tables: `M['torch.nn.modules.module']._global_forward_hooks`)
//   type(base).name
//                the attribute `name` of type(base) as the method resolution
//                order finds it in the classes' own __dict__s: the function
//                or value stored there, never bound or run (class attributes
//                and methods capture read from the class)
//   base.__closure__[i].cell_contents
//                what cell i of the exact function base's closure holds
//
// A dict item read through its key is the entry whose key is of K's exact
// type and equal to it (1, 1.0 and True are told apart): capture guards the
// dict's keys with the same types (a `keys` guard), so that is the entry
// Python's `base[K]` finds. The last five forms only name values guards
// check: no graph input is read through them, so the rewritten bytecode
// never evaluates them.
//
// The text form above is the one the IR prints and parses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dync::ir {

class Source;
using SourcePtr = std::shared_ptr<const Source>;

/// A constant that names a dict entry: an exact int (in int64_t), str,
/// bool, finite float or None, or an exact tuple of those.
struct DictKey {
  enum class Kind : uint8_t { Int, Str, Bool, Float, None, Tuple };

  static DictKey integer(int64_t value);
  static DictKey str(std::string value);
  static DictKey boolean(bool value);
  static DictKey floating(double value);
  static DictKey none();
  static DictKey tuple(std::vector<DictKey> elements);

  Kind kind = Kind::None;
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  std::string strValue;
  std::vector<DictKey> elements;

  /// As Python writes it (`True`, `None`, `'a'`, `(1,)`) when \p python,
  /// else as the graph IR writes constants (`true`, `none`, `"a"`).
  void print(llvm::raw_ostream& os, bool python) const;
  /// The same constant: the same kinds and values, floats compared as
  /// dync_py_equals_float compares them (0.0 is not -0.0).
  friend bool operator==(const DictKey& a, const DictKey& b);
};

class Source {
public:
  enum class Kind : uint8_t {
    Local,
    Global,
    Attr,
    Item,
    Module,
    ClassAttr,
    Cell,
    /// `list(base.values())[i]`: the value at a position of a dict.
    ValueAt,
    /// `list(base)[i]`: the key at a position of a dict.
    KeyAt
  };

  static SourcePtr local(llvm::StringRef name);
  static SourcePtr global(llvm::StringRef name);
  static SourcePtr attr(SourcePtr base, llvm::StringRef name);
  static SourcePtr index(SourcePtr base, int64_t index);
  static SourcePtr key(SourcePtr base, llvm::StringRef key);
  /// base[key]: an int key gives index(), a str key(), any other a typed
  /// key.
  static SourcePtr item(SourcePtr base, const DictKey& key);
  static SourcePtr valueAt(SourcePtr base, int64_t position);
  static SourcePtr keyAt(SourcePtr base, int64_t position);
  static SourcePtr module(llvm::StringRef name);
  static SourcePtr classAttr(SourcePtr base, llvm::StringRef name);
  static SourcePtr cell(SourcePtr base, int64_t index);

  /// Parses the text form, all of \p text; errors say where it is
  /// malformed.
  static llvm::Expected<SourcePtr> parse(llvm::StringRef text);
  /// Parses the source that starts \p text, as far as the grammar goes, and
  /// sets \p length to the characters it took (on an error, to the offset
  /// of the problem). For sources inside a larger text, such as guards.
  static llvm::Expected<SourcePtr> parsePrefix(llvm::StringRef text, size_t& length);

  Kind kind() const { return kind_; }
  const SourcePtr& base() const { return base_; }
  /// The root Local, Global or Module source.
  const Source& root() const;
  /// The local, global, attribute or string key name.
  const std::string& name() const { return name_; }
  /// For Item sources with an integer index, Cell, ValueAt and KeyAt
  /// sources.
  bool hasIndex() const { return hasIndex_; }
  int64_t indexValue() const { return index_; }
  /// For Item sources whose key is neither an int nor a str: the bool,
  /// float, None or tuple; else null.
  const DictKey* typedKey() const { return typedKey_.get(); }
  /// For Item sources: the key, whichever of the three it is.
  DictKey itemKey() const;

  void print(llvm::raw_ostream& os) const;
  std::string str() const;
  /// A graph value name derived from the source, leaving out the
  /// `_parameters`/`_buffers`/`_modules` steps: `self_hidden_0_weight`.
  std::string valueName() const;

  friend bool operator==(const Source& a, const Source& b);

private:
  Source(Kind kind, SourcePtr base, std::string name, int64_t index, bool hasIndex,
         std::shared_ptr<const DictKey> typedKey = nullptr)
      : kind_(kind), base_(std::move(base)), name_(std::move(name)), index_(index),
        hasIndex_(hasIndex), typedKey_(std::move(typedKey)) {}

  Kind kind_;
  SourcePtr base_;
  std::string name_;
  int64_t index_ = 0;
  bool hasIndex_ = false;
  std::shared_ptr<const DictKey> typedKey_;
};

} // namespace dync::ir
