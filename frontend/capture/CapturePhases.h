//===- CapturePhases.h - The phases of one capture attempt ------*- C++ -*-===//
//
// captureOnce (Capture.cpp) runs these in order, each over what the ones
// before it made:
//
//   1. the inputs: the example call bound to the entry's parameters
//      (bindInputs, CaptureInputs.cpp);
//   2. what is dynamic: the --dynamic declarations, and under --dynamic
//      auto every dimension and int that can be, checked against the
//      examples (declareDynamic, CaptureDynamic.cpp);
//   3. the entry's arguments as values with their sources, and the guards
//      on *args and **kwargs (makeArguments, CaptureInputs.cpp);
//   4. the run, with torch's modes saved and restored (Capture.cpp);
//   5. the graph's output and the side effects replayed after it
//      (setGraphOutput, Capture.cpp);
//   6. the dynamic declarations checked against what the run decided
//      (checkDynamicAfterRun, CaptureDynamic.cpp), and the --dynamic auto
//      report;
//   7. the guards and the finished graph (addGuards, Capture.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Capture.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/embedding/PyRef.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::capture {

/// An error about how the entry is called, located in the module's file
/// without a line.
llvm::Error inputError(const python::LoadedModule& module, const llvm::Twine& message);

/// Where one example argument binds, as CPython binds the call
/// f(*examples, **keywords): its name (for --dynamic), its source in the
/// frame and its object (borrowed from the example call).
struct ExampleBinding {
  std::string name;
  SourcePtr source;
  PyObject* object;
  bool keyword;
};

/// The entry's parameters and the example call bound to them.
struct EntryInputs {
  /// The entry's code (borrowed from the entry).
  PyCodeObject* code = nullptr;
  /// The object a method entry runs on; null for a function.
  python::PyRef self;
  /// The positional parameters' names.
  std::vector<std::string> parameters;
  /// A decorator's wrapper receives `self` in its *args.
  bool selfInVarargs = false;
  /// The first parameter the examples bind (1 past `self`).
  size_t firstExample = 0;
  /// The example call's tuple and dict, kept alive for the bindings.
  python::PyRef exampleArgs, exampleKwargs;
  size_t exampleCount = 0;
  size_t kwOnly = 0;
  bool hasVarargs = false, hasVarkw = false;
  std::string varargsName, varkwName;
  std::vector<ExampleBinding> bindings;
  /// The example keywords that name no parameter: **kwargs' keys.
  std::vector<std::string> extraKeywords;
  /// The entry function's defaults and keyword-only defaults (borrowed;
  /// null when it has none or is no Python function).
  PyObject* defaults = nullptr;
  PyObject* kwDefaults = nullptr;
  size_t defaultCount = 0;
  /// `self` of a method entry, as the argument --dynamic paths such as
  /// `self.window` start from.
  std::optional<ExampleBinding> selfBinding;

  bool givenByExample(const std::string& name) const;
};

/// Phase 1: finds `self`, calls the example functions and binds what they
/// return, failing with an inputError where they and the signature
/// disagree.
llvm::Expected<EntryInputs> bindInputs(const python::LoadedModule& module,
                                       const python::ResolvedEntry& entry,
                                       const CaptureOptions& options);

/// What is declared dynamic for one attempt.
struct DynamicDeclarations {
  /// The user's declarations, then the ones --dynamic auto added.
  std::vector<DynamicSpec> dynamic;
  /// The ones --dynamic auto added: a specialization is noted, not an
  /// error.
  std::vector<DynamicSpec> autoSpecs;
  /// Under --dynamic auto, why int arguments stayed static.
  std::vector<std::string> staticInts;

  bool isAuto(const DynamicSpec& spec) const;
};

/// Phase 2 (see captureGraph for \p autoInts and \p staticIntsBecause).
llvm::Expected<DynamicDeclarations>
declareDynamic(Interpreter& interp, const python::LoadedModule& module,
               const python::ResolvedEntry& entry, const CaptureOptions& options,
               const EntryInputs& inputs, bool* autoInts, const std::string& staticIntsBecause);

/// The entry's arguments as values.
struct EntryArguments {
  std::vector<ValuePtr> args;
  KeywordArgs keywords;
};

/// Phase 3: tensors and ints declared dynamic become graph inputs, other
/// arguments values read from the frame; guards on what the call left in
/// *args and **kwargs go to \p recorded.
llvm::Expected<EntryArguments>
makeArguments(Interpreter& interp, GuardSet& recorded, const python::LoadedModule& module,
              const python::ResolvedEntry& entry, const CaptureOptions& options,
              const EntryInputs& inputs, const DynamicDeclarations& declared);

/// Phase 6: each dimension and int declared dynamic is still a symbol over
/// at least its declared range, and each int declared inside an argument
/// was read.
llvm::Error checkDynamicAfterRun(Interpreter& interp, oracle::TensorOracle& oracle,
                                 ir::Graph& graph, const python::LoadedModule& module,
                                 const python::ResolvedEntry& entry, const CaptureOptions& options,
                                 const EntryInputs& inputs, const DynamicDeclarations& declared);

} // namespace dync::capture
