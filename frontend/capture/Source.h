//===- Source.h - Where a captured value comes from in the frame ----------===//
//
// Every value capture reads from the frame's inputs carries its source, the
// Python expression that reads it again: `L['x']`, `L['self'].fc.weight`,
// `L['self'].layers[0]`, `G['torch']`. Graph inputs and guards are named by
// sources, and the runtime evaluates them to check guards and bind inputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

namespace dync::capture {

class Source;
using SourcePtr = std::shared_ptr<const Source>;

/// A node of the source tree: a frame local, a global of the entry's module,
/// an attribute of another source, or an item (int index or string key) of
/// another source.
class Source {
public:
  enum class Kind : uint8_t { Local, Global, Attr, Item };

  static SourcePtr local(llvm::StringRef name);
  static SourcePtr global(llvm::StringRef name);
  static SourcePtr attr(SourcePtr base, llvm::StringRef name);
  static SourcePtr index(SourcePtr base, int64_t index);
  static SourcePtr key(SourcePtr base, llvm::StringRef key);

  Kind kind() const { return kind_; }
  const SourcePtr& base() const { return base_; }
  /// The local, global, attribute or string key name.
  const std::string& name() const { return name_; }
  /// For Item sources with an integer index.
  bool hasIndex() const { return hasIndex_; }
  int64_t indexValue() const { return index_; }

  /// `L['self'].hidden[0].weight`.
  void print(llvm::raw_ostream& os) const;
  std::string str() const;
  /// A graph value name derived from the source: `self_hidden_0_weight`.
  std::string valueName() const;

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

} // namespace dync::capture
