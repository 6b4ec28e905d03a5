//===- OpSchemas.h - Argument positions of operator overloads --*- C++ -*-===//
//
// The shim takes arguments by schema position only, while graphs may pass
// some by keyword (`memory_format=contiguous_format`). Placing a keyword
// argument needs the overload's argument names, which come from torch; codegen
// receives them as plain schema text (`str(torch.ops.aten.clone.default._schema)`)
// so that it never depends on torch or on the frontend's Python objects.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::codegen {

/// Argument names of operator overloads, keyed by `namespace::name.overload`
/// (the unnamed overload spelled `default`, as the graph IR spells it).
class OpSchemas {
public:
  /// Adds one schema, e.g.
  /// `aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor`.
  llvm::Error add(llvm::StringRef schema);
  /// Adds every non-empty line of \p text that does not start with `#`.
  llvm::Error addLines(llvm::StringRef text);

  /// The position of argument \p name of \p op, if both are known.
  std::optional<unsigned> position(llvm::StringRef op, llvm::StringRef name) const;
  bool contains(llvm::StringRef op) const { return args_.count(op) != 0; }
  /// The declared type of argument \p index of \p op (`Tensor`, `Scalar`,
  /// `int[2]`), if known.
  std::optional<llvm::StringRef> type(llvm::StringRef op, unsigned index) const;

private:
  struct Arg {
    std::string type;
    std::string name;
  };
  llvm::StringMap<std::vector<Arg>> args_;
};

} // namespace dync::codegen
