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
//   base[i]      item i of an exact list or tuple (negative counts from
//                the end); of an exact dict or collections.OrderedDict
//                (nn.Module's hook tables), the value at position i in
//                its iteration order. Guards only: no graph input is read
//                through a dict position (BINARY_SUBSCR would read a key)
//   base['key']  the str key of an exact dict
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
// The last three only name values guards check: no graph input is read
// through them, so the rewritten bytecode never evaluates them.
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

namespace dync::ir {

class Source;
using SourcePtr = std::shared_ptr<const Source>;

class Source {
public:
  enum class Kind : uint8_t { Local, Global, Attr, Item, Module, ClassAttr, Cell };

  static SourcePtr local(llvm::StringRef name);
  static SourcePtr global(llvm::StringRef name);
  static SourcePtr attr(SourcePtr base, llvm::StringRef name);
  static SourcePtr index(SourcePtr base, int64_t index);
  static SourcePtr key(SourcePtr base, llvm::StringRef key);
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
  /// For Item sources with an integer index, and Cell sources.
  bool hasIndex() const { return hasIndex_; }
  int64_t indexValue() const { return index_; }

  void print(llvm::raw_ostream& os) const;
  std::string str() const;
  /// A graph value name derived from the source, leaving out the
  /// `_parameters`/`_buffers`/`_modules` steps: `self_hidden_0_weight`.
  std::string valueName() const;

  friend bool operator==(const Source& a, const Source& b);

private:
  Source(Kind kind, SourcePtr base, std::string name, int64_t index, bool hasIndex)
      : kind_(kind), base_(std::move(base)), name_(std::move(name)), index_(index),
        hasIndex_(hasIndex) {}

  Kind kind_;
  SourcePtr base_;
  std::string name_;
  int64_t index_ = 0;
  bool hasIndex_ = false;
};

} // namespace dync::ir
