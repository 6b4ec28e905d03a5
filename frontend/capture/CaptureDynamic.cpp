//===- CaptureDynamic.cpp - What --dynamic declares, and checked after ----===//
//
// The phases of a capture attempt about dynamic sizes (CapturePhases.h):
// before the run, what is dynamic (the user's --dynamic declarations and,
// under --dynamic auto, every tensor dimension and int argument that can
// be), checked against the examples; after it, that each declared
// dimension and int is still a symbol over at least its declared range.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CapturePhases.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DeclaredInts.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

bool DynamicDeclarations::isAuto(const DynamicSpec& spec) const {
  return llvm::any_of(autoSpecs, [&](const DynamicSpec& a) { return a.text == spec.text; });
}

namespace {

/// --dynamic auto: every dimension of every tensor argument, named
/// ARG_DIM, without a range; specializations are noted, not errors.
llvm::Error declareAutoDimensions(Interpreter& interp, const std::vector<ExampleBinding>& bindings,
                                  DynamicDeclarations& declared) {
  std::vector<DynamicSpec>& dynamic = declared.dynamic;
  for (const ExampleBinding& binding : bindings) {
    if (PyObject_IsInstance(binding.object, interp.types().tensor.get()) != 1)
      continue;
    PyRef shape = PyRef::steal(PyObject_GetAttrString(binding.object, "shape"));
    Py_ssize_t rank = shape ? PyObject_Length(shape.get()) : -1;
    if (rank < 0)
      return pythonError("reading the shape of '" + binding.name + "'");
    for (Py_ssize_t d = 0; d < rank; ++d) {
      if (llvm::any_of(dynamic, [&](const DynamicSpec& s) {
            return s.argument == binding.name && s.path.empty() &&
                   s.dim == static_cast<unsigned>(d);
          }))
        continue;
      if (PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), d)) < 2)
        continue; // torch specializes 0 and 1
      DynamicSpec spec;
      spec.argument = binding.name;
      spec.dim = static_cast<unsigned>(d);
      spec.symbol = binding.name + "_" + std::to_string(d);
      spec.text = binding.name + ":" + std::to_string(d) + "=" + spec.symbol;
      declared.autoSpecs.push_back(spec);
      dynamic.push_back(std::move(spec));
    }
  }
  return llvm::Error::success();
}

// --- Int arguments under --dynamic auto: each exact int of 2 or more
// not declared otherwise, named after its argument ---
void declareAutoInts(const std::vector<ExampleBinding>& bindings, bool* autoInts,
                     const std::string& staticIntsBecause, DynamicDeclarations& declared) {
  std::vector<DynamicSpec>& dynamic = declared.dynamic;
  for (const ExampleBinding& binding : bindings) {
    if (!PyLong_CheckExact(binding.object) ||
        llvm::any_of(dynamic, [&](const DynamicSpec& s) { return s.argument == binding.name; }))
      continue;
    int overflow = 0;
    long long example = PyLong_AsLongLongAndOverflow(binding.object, &overflow);
    if (overflow || example < 2)
      continue; // torch specializes 0 and 1; a negative int is no size
    if (!staticIntsBecause.empty()) {
      declared.staticInts.push_back(binding.source->str() +
                                    " is static: with it symbolic, capture "
                                    "stopped: " +
                                    staticIntsBecause);
      continue;
    }
    DynamicSpec spec;
    spec.argument = binding.name;
    spec.intArgument = true;
    spec.symbol = binding.name;
    while (llvm::any_of(dynamic, [&](const DynamicSpec& s) { return s.symbol == spec.symbol; }))
      spec.symbol += "_int";
    spec.text = binding.name + "=" + spec.symbol;
    if (autoInts)
      *autoInts = true;
    declared.autoSpecs.push_back(spec);
    dynamic.push_back(std::move(spec));
  }
}
// --- end of int arguments under --dynamic auto ---

// --- Symbolic int arguments (`--dynamic n=n[1,64]`) ---
/// Checks \p spec, which names the int argument (or the tensor that is
/// not one) \p value, against the example.
llvm::Error checkIntArgumentDeclaration(const python::LoadedModule& module,
                                        const CaptureOptions& options, const DynamicSpec& spec,
                                        PyObject* value, bool isTensor) {
  if (isTensor)
    return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                  "' is a tensor: name one of its dimensions, as in "
                                  "--dynamic '" +
                                  spec.argument + ":0=" + spec.symbol + "'");
  if (!spec.intArgument)
    return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                  "' is an int, which has no dimensions: declare it as "
                                  "--dynamic '" +
                                  spec.argument + "=" + spec.symbol + "'");
  if (!PyLong_CheckExact(value))
    return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                  "' is a " + Py_TYPE(value)->tp_name +
                                  ", not an int; only an int argument can be a symbolic int");
  int overflow = 0;
  long long example = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow)
    return inputError(module, "--dynamic '" + spec.text + "': the example's '" + spec.argument +
                                  "' does not fit in 64 bits");
  if (auto hint = options.sizeHints.find(spec.symbol); hint != options.sizeHints.end())
    example = hint->second;
  if (!spec.range.contains(example))
    return inputError(module, "--dynamic '" + spec.text + "': the example's '" + spec.argument +
                                  "' is " + llvm::Twine(example) + ", outside the range");
  return llvm::Error::success();
}
// --- end of symbolic int arguments ---

/// Checks \p spec, which names a dimension of the tensor argument
/// \p value, against the example's shape.
llvm::Error checkDimensionDeclaration(const python::LoadedModule& module,
                                      const CaptureOptions& options, const DynamicSpec& spec,
                                      PyObject* value) {
  PyRef shape = PyRef::steal(PyObject_GetAttrString(value, "shape"));
  Py_ssize_t rank = shape ? PyObject_Length(shape.get()) : -1;
  if (rank < 0)
    return pythonError("reading the shape of '" + spec.argument + "'");
  if (spec.dim >= static_cast<unsigned>(rank))
    return inputError(module, "--dynamic '" + spec.text + "': '" + spec.argument + "' has " +
                                  llvm::Twine(rank) + " dimensions");
  long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), spec.dim));
  if (auto hint = options.sizeHints.find(spec.symbol); hint != options.sizeHints.end())
    size = hint->second;
  if (!spec.range.contains(size))
    return inputError(module, "--dynamic '" + spec.text + "': the example's size " +
                                  llvm::Twine(size) + " of '" + spec.argument + "' dimension " +
                                  llvm::Twine(spec.dim) + " is outside the range");
  return llvm::Error::success();
}

/// Checks one --dynamic declaration against the examples: the argument it
/// names (positional or keyword, or an int held on self), and the int or
/// dimension it declares there. Ints inside arguments are declared here.
llvm::Error checkDeclaration(Interpreter& interp, const python::LoadedModule& module,
                             const python::ResolvedEntry& entry, const CaptureOptions& options,
                             const EntryInputs& inputs, const DynamicSpec& spec) {
  const std::vector<ExampleBinding>& bindings = inputs.bindings;
  const std::optional<ExampleBinding>& selfBinding = inputs.selfBinding;
  auto it =
      llvm::find_if(bindings, [&](const ExampleBinding& b) { return b.name == spec.argument; });
  // --- Ints held on self ---
  if (it == bindings.end() && selfBinding && spec.argument == selfBinding->name) {
    if (spec.path.empty())
      return inputError(module, "--dynamic '" + spec.text + "': '" + spec.argument +
                                    "' is the object " + entry.qualname +
                                    " runs on, not an int or a tensor: declare an int it "
                                    "holds by its path, as in --dynamic '" +
                                    spec.argument + ".window=w[1,32]'");
    if (llvm::Error error =
            declareIntInside(interp, spec, selfBinding->object, selfBinding->source,
                             options.sizeHints, options.sizeHints.empty(), options.splitRanges))
      return inputError(module, llvm::toString(std::move(error)));
    return llvm::Error::success();
  }
  // --- end of ints held on self ---
  if (it == bindings.end())
    return inputError(module, "--dynamic '" + spec.text + "' names '" + spec.argument +
                                  "', which is not an example argument of " + entry.qualname);
  PyObject* value = it->object;
  // --- Ints inside arguments (`--dynamic cfg.n=n[1,64]`) ---
  if (!spec.path.empty()) {
    if (llvm::Error error = declareIntInside(interp, spec, value, it->source, options.sizeHints,
                                             options.sizeHints.empty(), options.splitRanges))
      return inputError(module, llvm::toString(std::move(error)));
    return llvm::Error::success();
  }
  bool isTensor = PyObject_IsInstance(value, interp.types().tensor.get()) == 1;
  if (spec.intArgument || (!isTensor && PyLong_Check(value) && !PyBool_Check(value)))
    return checkIntArgumentDeclaration(module, options, spec, value, isTensor);
  if (!isTensor)
    return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                  "' is not a tensor");
  return checkDimensionDeclaration(module, options, spec, value);
}

} // namespace

llvm::Expected<DynamicDeclarations>
declareDynamic(Interpreter& interp, const python::LoadedModule& module,
               const python::ResolvedEntry& entry, const CaptureOptions& options,
               const EntryInputs& inputs, bool* autoInts, const std::string& staticIntsBecause) {
  DynamicDeclarations declared;
  declared.dynamic = options.dynamic;
  if (options.autoDynamic) {
    if (llvm::Error error = declareAutoDimensions(interp, inputs.bindings, declared))
      return error;
    declareAutoInts(inputs.bindings, autoInts, staticIntsBecause, declared);
  }
  // --dynamic names arguments, positional or keyword; check them against
  // the examples first.
  for (const DynamicSpec& spec : declared.dynamic)
    if (llvm::Error error = checkDeclaration(interp, module, entry, options, inputs, spec))
      return error;
  return declared;
}

llvm::Error checkDynamicAfterRun(Interpreter& interp, oracle::TensorOracle& oracle,
                                 ir::Graph& graph, const python::LoadedModule& module,
                                 const python::ResolvedEntry& entry, const CaptureOptions& options,
                                 const EntryInputs& inputs, const DynamicDeclarations& declared) {
  const std::vector<ExampleBinding>& bindings = inputs.bindings;
  const std::optional<ExampleBinding>& selfBinding = inputs.selfBinding;
  const std::vector<DynamicSpec>& dynamic = declared.dynamic;
  auto isAuto = [&](const DynamicSpec& spec) { return declared.isAuto(spec); };
  // A dimension declared dynamic must still be a symbol, over at least the
  // declared range: otherwise the program decided something about it. A
  // specialization serves only part of the range.
  for (const DynamicSpec& spec :
       options.sizeHints.empty() && !options.autoDynamic ? dynamic : std::vector<DynamicSpec>{}) {
    auto binding =
        llvm::find_if(bindings, [&](const ExampleBinding& b) { return b.name == spec.argument; });
    for (const ValuePtr& input : interp.values().tensorInputs()) {
      if (!input->source || binding == bindings.end() || *input->source != *binding->source)
        continue;
      llvm::Expected<ir::Type> type = oracle.typeOf(input->object.get());
      if (!type)
        return type.takeError();
      ir::SymExpr size = type->sizes()[spec.dim];
      if (size.isConstant())
        return inputError(module, "--dynamic '" + spec.text +
                                      "' contradicts the program: it "
                                      "specialized dimension " +
                                      llvm::Twine(spec.dim) + " of '" + spec.argument +
                                      "' to the constant " + llvm::Twine(size.constantValue()));
      std::string symbol;
      llvm::raw_string_ostream os(symbol);
      size.print(os);
      if (const ir::SymbolDecl* decl = graph.findSymbol(symbol)) {
        // Torch specializes sizes 0 and 1 (a symbolic size is at least 2),
        // so a requested lower bound below 2 is met by 2.
        int64_t wantedLo = std::max<int64_t>(spec.range.lo.value_or(2), 2);
        bool narrower = (decl->range.lo && *decl->range.lo > wantedLo) ||
                        (spec.range.hi && decl->range.hi && *decl->range.hi < *spec.range.hi);
        // The caller splits a range cut at a boundary into graphs.
        if (narrower && (spec.range.lo || spec.range.hi) && !options.splitRanges) {
          std::string range;
          llvm::raw_string_ostream rs(range);
          decl->range.print(rs);
          return inputError(module, "--dynamic '" + spec.text +
                                        "' contradicts the program: it holds only for " + symbol +
                                        " in " + range);
        }
      }
    }
  }

  // --- Symbolic int arguments: still a symbol, over the declared range ---
  if (options.sizeHints.empty())
    for (const ValuePtr& input : interp.values().intInputs()) {
      auto spec = llvm::find_if(dynamic, [&](const DynamicSpec& s) {
        auto binding =
            llvm::find_if(bindings, [&](const ExampleBinding& b) { return b.name == s.argument; });
        const ExampleBinding* found = binding != bindings.end() ? &*binding : nullptr;
        if (!found && selfBinding && s.argument == selfBinding->name)
          found = &*selfBinding;
        if (!s.intArgument || !found)
          return false;
        SourcePtr declared = sourceOf(s, found->source);
        return declared && *declared == *input->source;
      });
      if (spec == dynamic.end() || isAuto(*spec))
        continue;
      llvm::Expected<ir::SymExpr> value = oracle.symExprOf(input->object.get());
      if (!value)
        return value.takeError();
      if (value->isConstant())
        return inputError(module, "--dynamic '" + spec->text +
                                      "' contradicts the program: it specialized '" +
                                      spec->argument + spec->path + "' to the constant " +
                                      llvm::Twine(value->constantValue()));
      const ir::SymbolDecl* decl =
          value->isSymbol() ? graph.findSymbol(value->symbolName()) : nullptr;
      if (!decl || options.splitRanges || (!spec->range.lo && !spec->range.hi))
        continue;
      int64_t wantedLo = std::max<int64_t>(spec->range.lo.value_or(2), 2);
      if ((decl->range.lo && *decl->range.lo > wantedLo) ||
          (spec->range.hi && decl->range.hi && *decl->range.hi < *spec->range.hi)) {
        std::string range;
        llvm::raw_string_ostream rs(range);
        decl->range.print(rs);
        return inputError(module, "--dynamic '" + spec->text +
                                      "' contradicts the program: it holds only for " +
                                      value->symbolName() + " in " + range);
      }
    }
  // An int declared inside an argument that the program never read from
  // there would stay whatever the graph assumed: say so.
  for (const ValueBuilder::DeclaredInt& declared : interp.values().declaredInts())
    if (!declared.value && options.sizeHints.empty())
      return inputError(
          module, "--dynamic: " + entry.qualname + " never reads " + declared.source->str() +
                      " (an attribute of an object's instance __dict__ or its class, or an item "
                      "of an exact list, tuple or dict), so it cannot be a "
                      "symbol; declare an int the program reads");
  // --- end of symbolic int arguments ---
  return llvm::Error::success();
}

} // namespace dync::capture
