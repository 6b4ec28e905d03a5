//===- DeclaredInts.h - Ints inside arguments declared dynamic ------------===//
//
// `--dynamic cfg.n=n[1,64]` names an int the program reads from an argument
// (a config object's attribute, a tuple's or dict's item) rather than an
// argument itself. Before capture runs, the path is read from the example
// as guards would read it, and the int is declared to the interpreter,
// which makes it the graph's int input at the program's first read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/DynamicSpec.h"
#include "frontend/capture/Interpreter.h"

#include <map>

namespace dync::capture {

/// Reads what \p spec's path names inside the example \p argument (whose
/// source is \p argumentSource), checks it is an exact int inside the
/// declared range (at the size hint, when \p sizeHints holds the symbol),
/// and declares it to \p interp. \p watch: the program's specializations of
/// it are watched (the capture of the whole declared range). Errors say
/// which read failed or what the example holds.
llvm::Error declareIntInside(Interpreter& interp, const DynamicSpec& spec, PyObject* argument,
                             const SourcePtr& argumentSource,
                             const std::map<std::string, int64_t>& sizeHints, bool watch,
                             bool splitRanges);

} // namespace dync::capture
