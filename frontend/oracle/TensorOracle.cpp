//===- TensorOracle.cpp - Tensor semantics, asked of PyTorch itself -------===//
//
// The C++ half of the oracle. The Python half (python/oracle.py, embedded as
// module dync_oracle) runs each call on fake tensors and hands back records
// of the ATen calls it dispatched to, in plain Python values plus a few tag
// types; this file turns those records into graph nodes and keeps the map
// from fake tensors (by the id the Python half gave them) to graph values.
//
//===----------------------------------------------------------------------===//
#include "frontend/oracle/TensorOracle.h"

#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "frontend/oracle/EmbeddedModules.h"
#include "frontend/oracle/SymSubstitution.h"
#include "frontend/oracle/TensorMetaSchema.h"

#include "ir/AutogradFunction.h"
#include "ir/Parser.h"
#include "ir/Syntax.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace dync::oracle {

using python::PyRef;

namespace {

/// Where a tensor id's value is: a node, or one element of its result.
using Binding = std::pair<int64_t, std::optional<unsigned>>;

llvm::Error makeError(const llvm::Twine& message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `cpu`, `cuda:1`, `meta`: torch.device's str().
std::optional<ir::Device> parseDevice(llvm::StringRef text) {
  auto [kindText, indexText] = text.split(':');
  std::optional<ir::DeviceKind> kind = ir::parseDeviceKind(kindText);
  if (!kind)
    return std::nullopt;
  ir::Device device{*kind, -1};
  if (!indexText.empty() && indexText.getAsInteger(10, device.index))
    return std::nullopt;
  return device;
}

/// A name for a callable in messages: `torch._C._nn.linear`, `Tensor.view`.
std::string callableName(PyObject* callable) {
  // Called to describe a call that raised: looking names up must neither
  // run with that exception pending nor lose it.
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  auto restore = llvm::make_scope_exit([&] { PyErr_Restore(type, value, traceback); });
  // torch's public name for its own functions (`torch.tensor`, not the
  // `_VariableFunctionsClass.tensor` its C functions report), from its own
  // table (dync_oracle_layout).
  if (llvm::Expected<PyRef> layout = importEmbeddedModule("dync_oracle_layout")) {
    PyRef named =
        PyRef::steal(PyObject_CallMethod(layout->get(), "_qualified_callable_name", "O", callable));
    if (std::optional<std::string> text = named ? python::utf8Of(named.get()) : std::nullopt)
      return *text;
    PyErr_Clear();
  } else {
    llvm::consumeError(layout.takeError());
  }
  PyRef qualname = PyRef::steal(PyObject_GetAttrString(callable, "__qualname__"));
  if (!qualname)
    PyErr_Clear();
  PyRef module = PyRef::steal(PyObject_GetAttrString(callable, "__module__"));
  if (!module)
    PyErr_Clear();
  std::optional<std::string> name = python::utf8Of(qualname.get());
  if (!name)
    return python::strOf(callable);
  std::optional<std::string> moduleName = python::utf8Of(module.get());
  // torch's functions report the class that holds them as their module.
  if (moduleName == "torch._VariableFunctionsClass")
    moduleName = "torch";
  if (moduleName && *moduleName != "builtins")
    return *moduleName + "." + *name;
  return *name;
}

class PythonTensorOracle final : public TensorOracle {
public:
  PythonTensorOracle(ir::Graph& graph, const OracleOptions& options)
      : graph_(graph), builder_(graph), options_(options) {}

  llvm::Error start();

  ir::GraphBuilder& builder() override { return builder_; }
  void setLocation(llvm::StringRef where) override;
  llvm::Expected<PyRef> addTensorInput(PyObject* real, llvm::StringRef name, llvm::StringRef source,
                                       llvm::ArrayRef<DynamicDim> dynamicDims) override;
  llvm::Expected<PyRef> addIntInput(PyObject* real, llvm::StringRef name, llvm::StringRef source,
                                    const DynamicDim& symbol) override;
  llvm::Expected<PyRef> call(PyObject* callable, PyObject* args, PyObject* kwargs) override;
  std::optional<ir::ValueRef> valueOf(PyObject* fake) const override;
  void bindValue(PyObject* fake, ir::ValueRef ref) override;
  void beginSubgraph(ir::Graph& subgraph) override;
  std::vector<ir::ValueRef> endSubgraph() override;
  ir::GraphBuilder& recordingBuilder() override {
    return frames_.empty() ? builder_ : *frames_.back().builder;
  }
  llvm::Expected<ir::ValueRef> recordedValueOf(PyObject* fake) override;
  ir::Node* addRecordedCall(llvm::StringRef op, std::vector<ir::Argument> args,
                            ir::Type type) override {
    ir::Node* node = recordingBuilder().addCall(op, std::move(args), std::move(type));
    if (!frames_.empty())
      frames_.back().own.insert(node);
    return node;
  }
  llvm::Expected<PyRef> freshValue(PyObject* model, bool requiresGrad, ir::ValueRef value) override;
  llvm::Expected<PyRef> fakeOf(ir::ValueRef value) override;
  llvm::Expected<ir::Type> typeOf(PyObject* fake) override;
  llvm::Expected<ir::SymExpr> symExprOf(PyObject* symInt) override;
  llvm::Expected<PyRef> eagerLayout(PyObject* fake) override;
  llvm::Error finalize() override;
  PyRef takeRaisedException() override { return std::move(raised_); }
  std::optional<std::string> explainUndecidableBranch() override;
  llvm::Expected<ExampleTruth> exampleTruth(PyObject* fake) override;
  llvm::Expected<ExampleInts> exampleInts(PyObject* symInt) override;
  llvm::Error specializeInt(const std::string& name, long long value) override;
  llvm::Error specializeFloat(const std::string& name, double value) override;
  llvm::Error noteDecided(PyObject* symBool, bool side) override;
  std::optional<bool> decidedTruth(PyObject* symBool) override;
  size_t shapeFactCount() override;

private:
  /// See takeRaisedException.
  PyRef raised_;
  ir::Context& context() const { return graph_.context(); }

  /// The pending Python exception as an error: the oracle's own complaints
  /// (OracleError) by their message alone, torch's under \p context.
  llvm::Error pythonError(const llvm::Twine& context);
  /// Whether the pending exception is torch's refusal of a fake tensor
  /// passed where an int goes; the exception stays pending.
  bool tensorForInt();
  /// Calls session.<method>(args...).
  PyRef callMethod(PyObject* method, std::initializer_list<PyObject*> args);

  llvm::Error addRecords(PyObject* records);
  llvm::Error addRecord(PyObject* record, std::vector<int64_t>& bound);
  llvm::Expected<ir::Argument> argument(PyObject* object);
  llvm::Expected<ir::Type> resultType(PyObject* object, std::vector<Binding>& bindings,
                                      std::optional<unsigned> index);
  llvm::Expected<ir::Type> tensorType(PyObject* meta);
  llvm::Expected<ir::SymExpr> symExpr(PyObject* object);
  llvm::Expected<ir::SymExpr> parseSym(llvm::StringRef text);
  /// The comparison `(lhs, op, rhs, ...)` of finalize()'s relations, with
  /// \p substitution applied.
  llvm::Expected<ir::Comparison> comparison(PyObject* item, SymSubstitution& substitution);

  ir::Graph& graph_;
  ir::GraphBuilder builder_;
  OracleOptions options_;
  PyRef module_;
  PyRef session_;
  PyRef addInputMethod_, addIntInputMethod_, callMethod_, undoMethod_, metaMethod_, symTextMethod_,
      finalizeMethod_;
  PyRef eagerLayoutFunction_;
  // The Python half's tag types, recognized by exact type.
  enum Tag : unsigned {
    Ref,
    Sym,
    DTypeTag,
    DeviceTag,
    LayoutTag,
    MemoryFormatTag,
    TensorMeta,
    ScalarMeta,
    NumTags
  };
  bool is(PyObject* object, Tag tag) const {
    return reinterpret_cast<PyObject*>(Py_TYPE(object)) == tags_[tag].get();
  }
  PyRef tags_[NumTags];
  /// Where each field of a TensorMeta is, as the Python half declares them.
  TensorMetaSchema metaSchema_;
  PyRef oracleError_;
  PyRef idName_;
  PyRef whereName_;

  /// \p ref, a value of the graph being recorded into or of one enclosing
  /// it, as a value of the former: lifted through each open subgraph it
  /// is not a value of, as an input.
  llvm::Expected<ir::ValueRef> lift(ir::ValueRef ref);
  /// Declares in each subgraph and backward graph the symbols it mentions,
  /// as \p graph_ does.
  llvm::Error declareSubgraphSymbols();
  /// The backward graphs of the autograd.Functions \p graph_ applies.
  std::vector<ir::Graph*> backwardGraphs() const;

  llvm::DenseMap<int64_t, ir::ValueRef> values_;
  llvm::StringMap<ir::SymExpr> syms_;
  bool finalized_ = false;

  /// An open subgraph: its builder, the nodes it holds and the enclosing
  /// graph's value each of its inputs stands for.
  struct SubgraphFrame {
    std::unique_ptr<ir::GraphBuilder> builder;
    llvm::DenseSet<const ir::Node*> own;
    std::vector<std::pair<ir::ValueRef, ir::Node*>> lifted;
  };
  std::vector<SubgraphFrame> frames_;
  /// Every subgraph recorded into, for finalize.
  std::vector<ir::Graph*> subgraphs_;
  PyRef freshLikeMethod_;
};

llvm::Error PythonTensorOracle::start() {
  llvm::Expected<PyRef> module = importEmbeddedModule("dync_oracle");
  if (!module)
    return module.takeError();
  module_ = std::move(*module);
  auto get = [&](PyObject* object, const char* name, PyRef& slot) -> llvm::Error {
    slot = PyRef::steal(PyObject_GetAttrString(object, name));
    if (!slot)
      return python::takePythonError("starting the tensor oracle");
    return llvm::Error::success();
  };
  const char* tagNames[] = {"Ref",    "Sym",          "DType",      "Device",
                            "Layout", "MemoryFormat", "TensorMeta", "ScalarMeta"};
  static_assert(std::size(tagNames) == NumTags);
  for (unsigned tag = 0; tag < NumTags; ++tag)
    if (llvm::Error error = get(module_.get(), tagNames[tag], tags_[tag]))
      return error;
  if (llvm::Error error = get(module_.get(), "OracleError", oracleError_))
    return error;
  // TensorMeta's fields are declared once, on the Python side.
  PyRef metaFields;
  if (llvm::Error error = get(tags_[TensorMeta].get(), "FIELDS", metaFields))
    return error;
  llvm::Expected<TensorMetaSchema> metaSchema = readTensorMetaSchema(metaFields.get());
  if (!metaSchema)
    return metaSchema.takeError();
  metaSchema_ = *metaSchema;
  if (llvm::Error error = get(module_.get(), "eager_layout", eagerLayoutFunction_))
    return error;

  // The fusion decompositions are a module of their own, which the Python
  // half imports by name; it is loaded after dync_oracle, which prepares
  // torch's imports for capture.
  if (options_.decompositions == Decompositions::Fusion)
    if (llvm::Expected<PyRef> fusion = importEmbeddedModule("dync_fusion_decompositions"); !fusion)
      return fusion.takeError();

  PyRef sessionClass;
  if (llvm::Error error = get(module_.get(), "Session", sessionClass))
    return error;
  PyRef setting = PyRef::steal(python::newStr(spelling(options_.decompositions)));
  if (!setting)
    return python::takePythonError("starting the tensor oracle");
  session_ = PyRef::steal(PyObject_CallOneArg(sessionClass.get(), setting.get()));
  if (!session_)
    return pythonError("starting the tensor oracle");
  // Symbols the oracle names itself (torch's `u0`, `u1`, ...) must not be
  // words the IR reads otherwise (`u8` is a dtype).
  PyRef reserved = PyRef::steal(PySet_New(nullptr));
  if (!reserved)
    return pythonError("starting the tensor oracle");
  for (llvm::StringRef word : ir::reservedWords()) {
    PyRef text = PyRef::steal(python::newStr(word));
    if (!text || PySet_Add(reserved.get(), text.get()) != 0)
      return pythonError("starting the tensor oracle");
  }
  if (PyObject_SetAttrString(session_.get(), "reserved_names", reserved.get()) != 0)
    return pythonError("starting the tensor oracle");
  if ((!options_.inputsRequireGrad &&
       PyObject_SetAttrString(session_.get(), "inputs_require_grad", Py_False) != 0) ||
      (options_.recordsAutograd &&
       PyObject_SetAttrString(session_.get(), "records_autograd", Py_True) != 0))
    return pythonError("starting the tensor oracle");
  for (auto [name, slot] :
       {std::pair{"add_input", &addInputMethod_}, std::pair{"add_int_input", &addIntInputMethod_},
        std::pair{"call", &callMethod_}, std::pair{"undo", &undoMethod_},
        std::pair{"meta", &metaMethod_}, std::pair{"sym_text", &symTextMethod_},
        std::pair{"finalize", &finalizeMethod_}, std::pair{"fresh_like", &freshLikeMethod_}})
    if (llvm::Error error = get(session_.get(), name, *slot))
      return error;
  idName_ = PyRef::steal(PyUnicode_InternFromString("_dync_id"));
  whereName_ = PyRef::steal(PyUnicode_InternFromString("where"));
  if (!idName_ || !whereName_)
    return python::takePythonError("starting the tensor oracle");
  return llvm::Error::success();
}

bool PythonTensorOracle::tensorForInt() {
  // torch's argument parser says "... but got FakeTensor" when a tensor
  // stands where an int or a list of ints goes; eager takes a 0-d integer
  // tensor there through __index__, which a fake tensor cannot answer.
  if (!PyErr_Occurred() || !PyErr_ExceptionMatches(PyExc_TypeError))
    return false;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  std::string message = python::strOf(value);
  PyErr_Restore(type, value, traceback);
  return llvm::StringRef(message).contains("but got FakeTensor");
}

llvm::Error PythonTensorOracle::pythonError(const llvm::Twine& context) {
  if (PyErr_Occurred() && PyErr_ExceptionMatches(oracleError_.get())) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyRef owned[] = {PyRef::steal(type), PyRef::steal(value), PyRef::steal(traceback)};
    return makeError(python::strOf(value));
  }
  if (PyErr_Occurred()) {
    // Kept for the program's exception handlers; the error still says it.
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    raised_ = PyRef::borrow(value);
    PyErr_Restore(type, value, traceback);
  }
  return python::takePythonError(context);
}

PyRef PythonTensorOracle::callMethod(PyObject* method, std::initializer_list<PyObject*> args) {
  return PyRef::steal(
      PyObject_Vectorcall(method, const_cast<PyObject**>(args.begin()), args.size(), nullptr));
}

void PythonTensorOracle::setLocation(llvm::StringRef where) {
  PyRef text = PyRef::steal(python::newStr(where));
  if (!text || PyObject_SetAttr(session_.get(), whereName_.get(), text.get()) < 0)
    PyErr_Clear();
}

llvm::Expected<PyRef> PythonTensorOracle::addTensorInput(PyObject* real, llvm::StringRef name,
                                                         llvm::StringRef source,
                                                         llvm::ArrayRef<DynamicDim> dynamicDims) {
  if (finalized_)
    return makeError("the tensor oracle was already finalized");
  PyRef dims = PyRef::steal(PyList_New(0));
  if (!dims)
    return python::takePythonError("adding input " + source);
  for (const DynamicDim& dim : dynamicDims) {
    // The symbol must read back as itself: an identifier that is not one of
    // the IR's reserved words.
    llvm::Expected<ir::SymExpr> symbol = ir::parseSymExpr(dim.symbol, context());
    if (!symbol)
      llvm::consumeError(symbol.takeError());
    if (!symbol || !symbol->isSymbol() || symbol->symbolName() != dim.symbol)
      return makeError("'" + dim.symbol + "' cannot name the symbol of dimension " +
                       llvm::Twine(dim.dim) + " of " + source +
                       ": symbol names are identifiers other than the graph IR's reserved words");
    PyObject* bound[2];
    std::optional<int64_t> ends[2] = {dim.range.lo, dim.range.hi};
    for (int i = 0; i < 2; ++i)
      bound[i] = ends[i] ? PyLong_FromLongLong(*ends[i]) : Py_NewRef(Py_None);
    PyObject* hint = dim.hint ? PyLong_FromLongLong(*dim.hint) : Py_NewRef(Py_None);
    PyRef item = PyRef::steal(
        Py_BuildValue("(IsNNN)", dim.dim, dim.symbol.c_str(), bound[0], bound[1], hint));
    if (!item || PyList_Append(dims.get(), item.get()) < 0)
      return python::takePythonError("adding input " + source);
  }
  PyRef sourceText = PyRef::steal(python::newStr(source));
  if (!sourceText)
    return python::takePythonError("adding input " + source);
  PyRef result = callMethod(addInputMethod_.get(), {real, sourceText.get(), dims.get()});
  if (!result)
    return pythonError("making a fake tensor for " + source);
  PyObject* fake = PyTuple_GET_ITEM(result.get(), 0);
  PyObject* meta = PyTuple_GET_ITEM(result.get(), 1);
  llvm::Expected<ir::Type> type = tensorType(meta);
  if (!type)
    return type.takeError();
  ir::Node* node = builder_.addInput(name, std::move(*type), source);
  values_[PyLong_AsLongLong(PyTuple_GET_ITEM(meta, metaSchema_.id))] =
      ir::ValueRef{node, std::nullopt};
  return PyRef::borrow(fake);
}

llvm::Expected<PyRef> PythonTensorOracle::addIntInput(PyObject* real, llvm::StringRef name,
                                                      llvm::StringRef source,
                                                      const DynamicDim& symbol) {
  if (finalized_)
    return makeError("the tensor oracle was already finalized");
  llvm::Expected<ir::SymExpr> parsed = ir::parseSymExpr(symbol.symbol, context());
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  if (!parsed || !parsed->isSymbol() || parsed->symbolName() != symbol.symbol)
    return makeError("'" + symbol.symbol + "' cannot name the symbol of " + source +
                     ": symbol names are identifiers other than the graph IR's reserved words");
  PyObject* bound[2];
  std::optional<int64_t> ends[2] = {symbol.range.lo, symbol.range.hi};
  for (int i = 0; i < 2; ++i)
    bound[i] = ends[i] ? PyLong_FromLongLong(*ends[i]) : Py_NewRef(Py_None);
  PyRef lo = PyRef::steal(bound[0]), hi = PyRef::steal(bound[1]);
  PyRef hint =
      symbol.hint ? PyRef::steal(PyLong_FromLongLong(*symbol.hint)) : PyRef::borrow(Py_None);
  PyRef sourceText = PyRef::steal(python::newStr(source));
  PyRef symbolText = PyRef::steal(python::newStr(symbol.symbol));
  if (!lo || !hi || !hint || !sourceText || !symbolText)
    return python::takePythonError("adding input " + source);
  PyRef symInt = callMethod(addIntInputMethod_.get(), {real, sourceText.get(), symbolText.get(),
                                                       lo.get(), hi.get(), hint.get()});
  if (!symInt)
    return pythonError("making a symbolic int for " + source);
  llvm::Expected<ir::SymExpr> expr = symExprOf(symInt.get());
  if (!expr)
    return expr.takeError();
  builder_.addInput(name, ir::Type::integer(*expr), source);
  return symInt;
}

llvm::Expected<PyRef> PythonTensorOracle::call(PyObject* callable, PyObject* args,
                                               PyObject* kwargs) {
  if (finalized_)
    return makeError("the tensor oracle was already finalized");
  PyRef result = callMethod(callMethod_.get(), {callable, args, kwargs ? kwargs : Py_None});
  if (!result && tensorForInt())
    return pythonError("calling " + callableName(callable) +
                       " with the example's sizes, with a tensor where torch takes an int "
                       "(a size read from a tensor's values, as a packed sequence's "
                       "batch_sizes[0] is, depends on the data: not supported yet)");
  if (!result)
    // Capture runs the call on tensors that have the example's sizes but no
    // values; the words say so without torch's name for them.
    return pythonError("calling " + callableName(callable) + " with the example's sizes");
  // A record the graph cannot hold takes the whole call back, so the graph
  // is as it was before the call.
  ir::Graph& recording = recordingBuilder().graph();
  ir::Node* last = recording.nodes().empty() ? nullptr : &recording.nodes().back();
  if (llvm::Error error = addRecords(PyTuple_GET_ITEM(result.get(), 1))) {
    while (!recording.nodes().empty() && &recording.nodes().back() != last) {
      if (!frames_.empty())
        frames_.back().own.erase(&recording.nodes().back());
      recording.erase(&recording.nodes().back());
    }
    PyRef undone = callMethod(undoMethod_.get(), {});
    if (!undone)
      PyErr_Clear();
    return error;
  }
  return PyRef::borrow(PyTuple_GET_ITEM(result.get(), 0));
}

size_t PythonTensorOracle::shapeFactCount() {
  PyRef count = PyRef::steal(PyObject_CallMethod(session_.get(), "fact_count", nullptr));
  size_t facts = count ? PyLong_AsSize_t(count.get()) : size_t(-1);
  if (PyErr_Occurred()) {
    // Unknown counts as changed: speculation then gives up.
    PyErr_Clear();
    return size_t(-1);
  }
  return facts;
}

llvm::Expected<PyRef> PythonTensorOracle::eagerLayout(PyObject* fake) {
  PyRef args = PyRef::steal(PyTuple_Pack(1, fake));
  if (!args)
    return python::takePythonError("restoring a result's layout");
  return call(eagerLayoutFunction_.get(), args.get(), nullptr);
}

llvm::Error PythonTensorOracle::addRecords(PyObject* records) {
  std::vector<int64_t> bound;
  for (Py_ssize_t i = 0, e = PyList_GET_SIZE(records); i < e; ++i)
    if (llvm::Error error = addRecord(PyList_GET_ITEM(records, i), bound)) {
      // The ids this call bound name nodes the caller is about to erase.
      for (int64_t id : bound)
        values_.erase(id);
      return error;
    }
  return llvm::Error::success();
}

llvm::Error PythonTensorOracle::addRecord(PyObject* record, std::vector<int64_t>& bound) {
  // (op, args, kwargs or None, result)
  llvm::StringRef op;
  {
    Py_ssize_t length = 0;
    const char* text = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(record, 0), &length);
    if (!text)
      return python::takePythonError("reading a recorded operator");
    op = llvm::StringRef(text, length);
  }
  // The oracle records requires_grad_() and a factory's requires_grad=True
  // as this operator. A torch.cond branch runs in eager under its own
  // autograd rules (its results follow the operands alone), which a node in
  // the branch would not follow.
  if (op == "aten::requires_grad_.default" && !frames_.empty())
    return makeError("this call changes whether a tensor requires grad (requires_grad_()) "
                     "inside a torch.cond branch, which the graph does not record yet: its "
                     "tensors would keep their old flag; make the change outside the branch");
  std::vector<ir::Argument> args;
  PyObject* argTuple = PyTuple_GET_ITEM(record, 1);
  for (Py_ssize_t i = 0, e = PyTuple_GET_SIZE(argTuple); i < e; ++i) {
    llvm::Expected<ir::Argument> arg = argument(PyTuple_GET_ITEM(argTuple, i));
    if (!arg)
      return makeError(op + ": " + llvm::toString(arg.takeError()));
    args.push_back(std::move(*arg));
  }
  std::vector<ir::KeywordArgument> kwargs;
  PyObject* kwargDict = PyTuple_GET_ITEM(record, 2);
  if (kwargDict != Py_None) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargDict, &pos, &key, &value)) {
      llvm::Expected<ir::Argument> arg = argument(value);
      if (!arg)
        return makeError(op + ": " + llvm::toString(arg.takeError()));
      kwargs.push_back({python::utf8Of(key).value_or(""), std::move(*arg)});
    }
  }
  std::vector<Binding> bindings;
  llvm::Expected<ir::Type> type = resultType(PyTuple_GET_ITEM(record, 3), bindings, std::nullopt);
  if (!type)
    return makeError(op + ": " + llvm::toString(type.takeError()));
  ir::Node* node =
      recordingBuilder().addCall(op, std::move(args), std::move(kwargs), std::move(*type));
  if (!frames_.empty())
    frames_.back().own.insert(node);
  for (const auto& [id, index] : bindings) {
    values_[id] = ir::ValueRef{node, index};
    bound.push_back(id);
  }
  return llvm::Error::success();
}

llvm::Expected<ir::Argument> PythonTensorOracle::argument(PyObject* object) {
  if (is(object, Ref)) {
    auto it = values_.find(PyLong_AsLongLong(object));
    if (it == values_.end())
      return makeError("a fake tensor that is no value of this graph reached the operator");
    llvm::Expected<ir::ValueRef> ref = lift(it->second);
    if (!ref)
      return ref.takeError();
    return ir::Argument::value(ref->node, ref->index);
  }
  if (is(object, Sym)) {
    llvm::Expected<ir::SymExpr> value = symExpr(object);
    if (!value)
      return value.takeError();
    return ir::Argument::sym(*value);
  }
  if (is(object, DTypeTag) || is(object, DeviceTag) || is(object, LayoutTag) ||
      is(object, MemoryFormatTag)) {
    std::string text = python::utf8Of(object).value_or("");
    if (is(object, DTypeTag))
      if (std::optional<ir::DType> dtype = ir::parseDType(text))
        return ir::Argument::dtype(*dtype);
    if (is(object, DeviceTag))
      if (std::optional<ir::Device> device = parseDevice(text))
        return ir::Argument::device(*device);
    if (is(object, LayoutTag))
      if (std::optional<ir::Layout> layout = ir::parseLayout(text))
        return ir::Argument::layout(*layout);
    if (is(object, MemoryFormatTag))
      if (std::optional<ir::MemoryFormat> format = ir::parseMemoryFormat(text))
        return ir::Argument::memoryFormat(*format);
    return makeError("'" + text + "' has no spelling in the graph IR");
  }
  if (object == Py_None)
    return ir::Argument::none();
  if (PyBool_Check(object))
    return ir::Argument::boolean(object == Py_True);
  if (PyLong_CheckExact(object)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow)
      return makeError("the integer " + python::strOf(object) + " does not fit in 64 bits");
    return ir::Argument::sym(context().constant(value));
  }
  if (PyFloat_CheckExact(object))
    return ir::Argument::floating(PyFloat_AS_DOUBLE(object));
  if (PyComplex_CheckExact(object))
    return ir::Argument::complex({PyComplex_RealAsDouble(object), PyComplex_ImagAsDouble(object)});
  if (PyUnicode_CheckExact(object))
    return ir::Argument::string(python::utf8Of(object).value_or(""));
  if (PyList_CheckExact(object) || PyTuple_CheckExact(object)) {
    bool isList = PyList_CheckExact(object);
    Py_ssize_t size = isList ? PyList_GET_SIZE(object) : PyTuple_GET_SIZE(object);
    std::vector<ir::Argument> elements;
    elements.reserve(size);
    for (Py_ssize_t i = 0; i < size; ++i) {
      llvm::Expected<ir::Argument> element =
          argument(isList ? PyList_GET_ITEM(object, i) : PyTuple_GET_ITEM(object, i));
      if (!element)
        return element.takeError();
      elements.push_back(std::move(*element));
    }
    return isList ? ir::Argument::list(std::move(elements))
                  : ir::Argument::tuple(std::move(elements));
  }
  return makeError("an argument of type " + python::typeDisplayName(Py_TYPE(object)) +
                   " has no form in the graph IR");
}

llvm::Expected<ir::Type> PythonTensorOracle::resultType(PyObject* object,
                                                        std::vector<Binding>& bindings,
                                                        std::optional<unsigned> index) {
  if (is(object, TensorMeta)) {
    llvm::Expected<ir::Type> tensor = tensorType(object);
    if (tensor)
      bindings.push_back({PyLong_AsLongLong(PyTuple_GET_ITEM(object, metaSchema_.id)), index});
    return tensor;
  }
  if (is(object, ScalarMeta)) {
    // (id, "float" or "bool"): a number computed from tensor data.
    bindings.push_back({PyLong_AsLongLong(PyTuple_GET_ITEM(object, 0)), index});
    bool isFloat = python::utf8Of(PyTuple_GET_ITEM(object, 1)).value_or("") == "float";
    return isFloat ? ir::Type::floating() : ir::Type::boolean();
  }
  if (PyList_CheckExact(object) || PyTuple_CheckExact(object)) {
    bool isList = PyList_CheckExact(object);
    Py_ssize_t size = isList ? PyList_GET_SIZE(object) : PyTuple_GET_SIZE(object);
    std::vector<ir::Type> elements;
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyObject* element = isList ? PyList_GET_ITEM(object, i) : PyTuple_GET_ITEM(object, i);
      size_t before = bindings.size();
      llvm::Expected<ir::Type> elementType =
          resultType(element, bindings, static_cast<unsigned>(i));
      if (!elementType)
        return elementType.takeError();
      // `%v#i` reaches one level into a result; deeper tensors would be
      // values nothing could name.
      if (index && bindings.size() != before)
        return makeError("a tensor nested two levels deep in a result has no graph value");
      elements.push_back(std::move(*elementType));
    }
    return isList ? ir::Type::list(elements) : ir::Type::tuple(elements);
  }
  if (is(object, Sym) || PyLong_CheckExact(object)) {
    llvm::Expected<ir::SymExpr> value = symExpr(object);
    if (!value)
      return value.takeError();
    return ir::Type::integer(*value);
  }
  if (object == Py_None)
    return ir::Type::none();
  if (PyBool_Check(object))
    return ir::Type::boolean();
  if (PyFloat_CheckExact(object))
    return ir::Type::floating();
  return makeError("a result of type " + python::typeDisplayName(Py_TYPE(object)) +
                   " has no type in the graph IR");
}

llvm::Expected<ir::Type> PythonTensorOracle::tensorType(PyObject* meta) {
  if (PyTuple_GET_SIZE(meta) != metaSchema_.size)
    return makeError("a TensorMeta of " + std::to_string(PyTuple_GET_SIZE(meta)) +
                     " fields, not the " + std::to_string(metaSchema_.size) + " declared");
  std::string dtypeText = python::utf8Of(PyTuple_GET_ITEM(meta, metaSchema_.dtype)).value_or("");
  std::optional<ir::DType> dtype = ir::parseDType(dtypeText);
  if (!dtype)
    return makeError("dtype '" + dtypeText + "' has no spelling in the graph IR");
  llvm::SmallVector<ir::SymExpr, 4> dims[2];
  for (int which = 0; which < 2; ++which) {
    PyObject* list = PyTuple_GET_ITEM(meta, which ? metaSchema_.strides : metaSchema_.sizes);
    for (Py_ssize_t i = 0, e = PyTuple_GET_SIZE(list); i < e; ++i) {
      llvm::Expected<ir::SymExpr> value = symExpr(PyTuple_GET_ITEM(list, i));
      if (!value)
        return value.takeError();
      dims[which].push_back(*value);
    }
  }
  std::string deviceText = python::utf8Of(PyTuple_GET_ITEM(meta, metaSchema_.device)).value_or("");
  std::optional<ir::Device> device = parseDevice(deviceText);
  if (!device)
    return makeError("device '" + deviceText + "' has no spelling in the graph IR");
  bool requiresGrad = PyTuple_GET_ITEM(meta, metaSchema_.requiresGrad) == Py_True;
  PyObject* sparse = PyTuple_GET_ITEM(meta, metaSchema_.sparse);
  if (sparse == Py_None)
    return ir::Type::tensor(*dtype, dims[0], dims[1], *device, requiresGrad);
  // (sparse_dim, nnz, is_coalesced) of a sparse COO tensor.
  if (!PyTuple_Check(sparse) || PyTuple_GET_SIZE(sparse) != 3)
    return makeError("a TensorMeta's sparse field is not (sparse_dim, nnz, is_coalesced)");
  long long sparseDim = PyLong_AsLongLong(PyTuple_GET_ITEM(sparse, 0));
  if (sparseDim == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return makeError("a TensorMeta's sparse_dim is not an int");
  }
  llvm::Expected<ir::SymExpr> nnz = symExpr(PyTuple_GET_ITEM(sparse, 1));
  if (!nnz)
    return nnz.takeError();
  return ir::Type::sparseCooTensor(*dtype, dims[0], sparseDim, *nnz,
                                   PyTuple_GET_ITEM(sparse, 2) == Py_True, *device, requiresGrad);
}

llvm::Expected<ir::SymExpr> PythonTensorOracle::symExpr(PyObject* object) {
  if (PyLong_Check(object) && !PyBool_Check(object)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow)
      return makeError("the integer " + python::strOf(object) + " does not fit in 64 bits");
    return context().constant(value);
  }
  Py_ssize_t length = 0;
  const char* text = PyUnicode_Check(object) ? PyUnicode_AsUTF8AndSize(object, &length) : nullptr;
  if (!text) {
    PyErr_Clear();
    return makeError("expected a symbolic integer, got a " +
                     python::typeDisplayName(Py_TYPE(object)));
  }
  return parseSym(llvm::StringRef(text, length));
}

llvm::Expected<ir::SymExpr> PythonTensorOracle::parseSym(llvm::StringRef text) {
  // The same few expressions come back for every node of a layer stack, so
  // each text is parsed once.
  auto it = syms_.find(text);
  if (it != syms_.end())
    return it->second;
  llvm::Expected<ir::SymExpr> value = ir::parseSymExpr(text, context());
  if (!value)
    return makeError("the symbolic integer '" + text +
                     "' did not parse: " + llvm::toString(value.takeError()));
  syms_[text] = *value;
  return *value;
}

std::optional<ir::ValueRef> PythonTensorOracle::valueOf(PyObject* fake) const {
  PyRef id = PyRef::steal(PyObject_GetAttr(fake, idName_.get()));
  // A torch.SymFloat or SymBool is named by its SymNode, which torch keeps
  // where it makes new wrappers of it.
  if (!id && PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();
    if (PyRef node = PyRef::steal(PyObject_GetAttrString(fake, "node")))
      id = PyRef::steal(PyObject_GetAttr(node.get(), idName_.get()));
  }
  if (!id || !PyLong_Check(id.get())) {
    PyErr_Clear();
    return std::nullopt;
  }
  auto it = values_.find(PyLong_AsLongLong(id.get()));
  if (it == values_.end())
    return std::nullopt;
  return it->second;
}

//===----------------------------------------------------------------------===//
// Subgraphs
//===----------------------------------------------------------------------===//

void PythonTensorOracle::beginSubgraph(ir::Graph& subgraph) {
  auto builder = std::make_unique<ir::GraphBuilder>(subgraph);
  // Nodes of the subgraph name the user's lines as the graph's do.
  builder->setLocationSource(builder_.locationSource());
  frames_.push_back({std::move(builder), {}, {}});
  subgraphs_.push_back(&subgraph);
}

std::vector<ir::ValueRef> PythonTensorOracle::endSubgraph() {
  assert(!frames_.empty() && "no subgraph is open");
  SubgraphFrame frame = std::move(frames_.back());
  frames_.pop_back();
  // A fake tensor made in the subgraph that capture still holds (none
  // should escape a branch) must not reach a node of another graph.
  for (auto it = values_.begin(); it != values_.end();) {
    auto current = it++;
    if (frame.own.contains(current->second.node))
      values_.erase(current);
  }
  std::vector<ir::ValueRef> outer;
  for (const auto& [ref, input] : frame.lifted)
    outer.push_back(ref);
  return outer;
}

llvm::Expected<ir::ValueRef> PythonTensorOracle::lift(ir::ValueRef ref) {
  // The innermost open subgraph holding the node; 0 for the oracle's graph.
  size_t level = frames_.size();
  while (level > 0 && !frames_[level - 1].own.contains(ref.node))
    --level;
  for (size_t j = level; j < frames_.size(); ++j) {
    SubgraphFrame& frame = frames_[j];
    auto found = llvm::find_if(frame.lifted, [&](const auto& pair) { return pair.first == ref; });
    if (found != frame.lifted.end()) {
      ref = ir::ValueRef{found->second, std::nullopt};
      continue;
    }
    const ir::Type* type = ref.node->resultType(ref.index);
    if (!type || !type->isTensor())
      return makeError("a torch.cond branch uses %" + ref.node->name() +
                       " of the enclosing graph, which is not a tensor (" +
                       (type ? type->str() : std::string("no type")) +
                       "); a branch takes tensors only");
    ir::Node* input = frame.builder->addInput(ref.node->name(), *type, "");
    frame.own.insert(input);
    frame.lifted.push_back({ref, input});
    ref = ir::ValueRef{input, std::nullopt};
  }
  return ref;
}

llvm::Expected<ir::ValueRef> PythonTensorOracle::recordedValueOf(PyObject* fake) {
  std::optional<ir::ValueRef> ref = valueOf(fake);
  if (!ref)
    return makeError("a fake tensor that is no value of this graph");
  return lift(*ref);
}

llvm::Expected<PyRef> PythonTensorOracle::freshValue(PyObject* model, bool requiresGrad,
                                                     ir::ValueRef value) {
  PyRef result = callMethod(freshLikeMethod_.get(), {model, requiresGrad ? Py_True : Py_False});
  if (!result)
    return pythonError("making a fake tensor for a cond's result");
  PyObject* meta = PyTuple_GET_ITEM(result.get(), 1);
  values_[PyLong_AsLongLong(PyTuple_GET_ITEM(meta, metaSchema_.id))] = value;
  return PyRef::borrow(PyTuple_GET_ITEM(result.get(), 0));
}

llvm::Expected<PyRef> PythonTensorOracle::fakeOf(ir::ValueRef value) {
  for (const auto& [id, ref] : values_) {
    if (ref != value)
      continue;
    PyRef key = PyRef::steal(PyLong_FromLongLong(id));
    PyRef fake = key ? PyRef::steal(PyObject_CallMethod(session_.get(), "fake_of", "O", key.get()))
                     : PyRef();
    if (!fake)
      return pythonError("finding the fake tensor of %" + value.node->name());
    if (fake.get() != Py_None)
      return fake;
  }
  // An input of an open subgraph stands for a value of the graph around it.
  for (const SubgraphFrame& frame : frames_)
    for (const auto& [outer, input] : frame.lifted)
      if (input == value.node)
        return fakeOf(outer);
  return makeError("no fake tensor stands for %" + value.node->name() + " any more");
}

namespace {

/// Why a value from data is not specialized inside a backward or a
/// control-flow operator's body: those run inside the graph, where no
/// original code could run in its place. \p what names the value.
std::string insideGraphReason(llvm::StringRef what) {
  return (what + " in a graph that runs apart from the program's code (a backward, a "
                 "control-flow operator's body), which cannot fall back to it")
      .str();
}

/// The symbols \p graph's nodes mention, inputs included.
llvm::StringSet<> mentionedSymbols(const ir::Graph& graph) {
  llvm::StringSet<> mentioned;
  ir::forEachMentionedSymbol(graph,
                             [&](ir::SymExpr symbol) { mentioned.insert(symbol.symbolName()); });
  return mentioned;
}

/// Whether \p subgraph itself computes \p decl, an unbacked int, as the
/// int result of a call (item() of a carried int in a while_loop's
/// functions), with no range or relation to check: its function then reads
/// it as a graph function does (codegen/DataDependentSizes.cpp), anew on
/// each call.
bool computedWithin(const ir::Graph& subgraph, const ir::SymbolDecl& decl,
                    const ir::Graph& caller) {
  if (decl.range.lo || decl.range.hi || !ir::unbackedIntNode(subgraph, decl.name))
    return false;
  bool related = false;
  for (const ir::Relation& relation : caller.relations())
    relation.walkSymbols([&](ir::SymExpr symbol) { related |= symbol.symbolName() == decl.name; });
  return !related;
}

} // namespace

std::vector<ir::Graph*> PythonTensorOracle::backwardGraphs() const {
  std::vector<ir::Graph*> backwards;
  if (graph_.module())
    for (const ir::Graph* backward : ir::backwardGraphsOf(graph_))
      backwards.push_back(graph_.module()->findBackward(backward->name()));
  return backwards;
}

llvm::Error PythonTensorOracle::declareSubgraphSymbols() {
  for (ir::Graph* subgraph : subgraphs_) {
    llvm::StringSet<> mentioned = mentionedSymbols(*subgraph);
    // In the graph's order, so that the text is stable.
    for (const ir::SymbolDecl& decl : graph_.symbols()) {
      if (!mentioned.contains(decl.name))
        continue;
      if (decl.unbacked && !computedWithin(*subgraph, decl, graph_))
        return makeError("the subgraph @" + subgraph->name() +
                         " (a torch.cond branch or a torch while_loop function) uses the "
                         "data-dependent value " +
                         decl.name +
                         ", which such a function may use only as an int it computes itself "
                         "(item() of a carried int) with no range or torch._check stated on it; "
                         "other data-dependent values in them are not supported yet");
      subgraph->symbols().push_back(decl);
      mentioned.erase(decl.name);
    }
    if (!mentioned.empty())
      return makeError("the subgraph @" + subgraph->name() +
                       " (a torch.cond branch or a torch while_loop function) makes the size " +
                       mentioned.begin()->getKey() +
                       " of its own, which depends on tensor data; data-dependent sizes in "
                       "them are not supported yet");
  }
  // A backward graph reads every symbol it mentions from the sizes of the
  // tensors it takes or its int inputs (capture made it so), so one the
  // entry graph computes from data (`nonzero`'s count) is a plain size
  // there too.
  for (ir::Graph* backward : backwardGraphs()) {
    llvm::StringSet<> mentioned = mentionedSymbols(*backward);
    for (const ir::SymbolDecl& decl : graph_.symbols())
      if (mentioned.erase(decl.name)) {
        backward->symbols().push_back(decl);
        backward->symbols().back().unbacked = false;
      }
    if (!mentioned.empty())
      return makeError("the backward graph @" + backward->name() + " uses the size " +
                       mentioned.begin()->getKey() + ", which its entry graph does not declare");
    std::vector<ir::SymExpr> unbound = ir::unboundSymbols(*backward);
    if (!unbound.empty())
      return makeError("the backward graph @" + backward->name() + " uses the size " +
                       unbound.front().symbolName() +
                       ", which none of its inputs carries once torch's shape environment "
                       "related it to other sizes");
  }
  return llvm::Error::success();
}

void PythonTensorOracle::bindValue(PyObject* fake, ir::ValueRef ref) {
  PyRef id = PyRef::steal(PyObject_GetAttr(fake, idName_.get()));
  if (!id || !PyLong_Check(id.get())) {
    PyErr_Clear();
    return;
  }
  values_[PyLong_AsLongLong(id.get())] = ref;
}

llvm::Expected<ir::Type> PythonTensorOracle::typeOf(PyObject* fake) {
  PyRef meta = callMethod(metaMethod_.get(), {fake});
  if (!meta)
    return pythonError("reading the type of a fake tensor");
  return tensorType(meta.get());
}

llvm::Expected<ir::SymExpr> PythonTensorOracle::symExprOf(PyObject* symInt) {
  PyRef text = callMethod(symTextMethod_.get(), {symInt});
  if (!text)
    return pythonError("reading a symbolic integer");
  return symExpr(text.get());
}

llvm::Expected<TensorOracle::ExampleInts> PythonTensorOracle::exampleInts(PyObject* symInt) {
  PyRef answer = PyRef::steal(
      PyObject_CallMethod(session_.get(), "example_ints", "O", symInt ? symInt : Py_None));
  if (!answer)
    return pythonError("reading the example's value of an int read from data");
  if (!PyTuple_Check(answer.get()) || PyTuple_GET_SIZE(answer.get()) != 2)
    return makeError("the oracle's example_ints returned no pair");
  PyObject* found = PyTuple_GET_ITEM(answer.get(), 0);
  PyObject* why = PyTuple_GET_ITEM(answer.get(), 1);
  ExampleInts ints;
  if (why != Py_None) {
    ints.whyNot = python::utf8Of(why).value_or("");
    // Same reason as exampleTruth's: nothing could run in the graph's place.
  } else if (found != Py_None && recordingBuilder().graph().kind() != ir::GraphKind::Entry) {
    ints.whyNot = insideGraphReason("the int is needed");
  } else if (found != Py_None) {
    for (Py_ssize_t i = 0, e = PyList_GET_SIZE(found); i < e; ++i) {
      PyObject* item = PyList_GET_ITEM(found, i);
      ExampleInt one;
      one.holds = PyRef::borrow(PyTuple_GET_ITEM(item, 0));
      one.name = python::utf8Of(PyTuple_GET_ITEM(item, 1)).value_or("");
      one.origin = python::utf8Of(PyTuple_GET_ITEM(item, 3)).value_or("");
      one.isFloat = PyTuple_GET_ITEM(item, 4) == Py_True;
      if (one.isFloat)
        one.real = PyFloat_AsDouble(PyTuple_GET_ITEM(item, 2));
      else
        one.value = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 2));
      ints.ints.push_back(std::move(one));
    }
  }
  return ints;
}

llvm::Error PythonTensorOracle::specializeInt(const std::string& name, long long value) {
  PyRef done = PyRef::steal(
      PyObject_CallMethod(session_.get(), "specialize_int", "sL", name.c_str(), value));
  if (!done)
    return pythonError("specializing an int read from data to the example's value");
  return llvm::Error::success();
}

llvm::Error PythonTensorOracle::specializeFloat(const std::string& name, double value) {
  PyRef done = PyRef::steal(
      PyObject_CallMethod(session_.get(), "specialize_float", "sd", name.c_str(), value));
  if (!done)
    return pythonError("specializing a float read from data to the example's value");
  return llvm::Error::success();
}

std::optional<bool> PythonTensorOracle::decidedTruth(PyObject* symBool) {
  PyRef side = PyRef::steal(PyObject_CallMethod(session_.get(), "decided_truth", "O", symBool));
  if (!side) {
    PyErr_Clear();
    return std::nullopt;
  }
  if (side.get() == Py_None)
    return std::nullopt;
  return side.get() == Py_True;
}

llvm::Error PythonTensorOracle::noteDecided(PyObject* symBool, bool side) {
  PyRef done = PyRef::steal(PyObject_CallMethod(session_.get(), "note_decided", "OO", symBool,
                                                side ? Py_True : Py_False));
  if (!done)
    return pythonError("noting a decision on data");
  return llvm::Error::success();
}

llvm::Expected<TensorOracle::ExampleTruth> PythonTensorOracle::exampleTruth(PyObject* fake) {
  // A backward or a control-flow operator's body runs inside the graph,
  // where no original code could run in its place.
  if (recordingBuilder().graph().kind() != ir::GraphKind::Entry)
    return ExampleTruth{std::nullopt, insideGraphReason("the decision is")};
  PyRef answer = PyRef::steal(PyObject_CallMethod(session_.get(), "example_truth", "O", fake));
  if (!answer)
    return pythonError("reading the example's value of a condition");
  if (!PyTuple_Check(answer.get()) || PyTuple_GET_SIZE(answer.get()) != 2)
    return makeError("the oracle's example_truth returned no pair");
  PyObject* value = PyTuple_GET_ITEM(answer.get(), 0);
  PyObject* why = PyTuple_GET_ITEM(answer.get(), 1);
  ExampleTruth truth;
  if (value != Py_None)
    truth.value = value == Py_True;
  if (why != Py_None)
    truth.whyNot = python::utf8Of(why).value_or("");
  return truth;
}

std::optional<std::string> PythonTensorOracle::explainUndecidableBranch() {
  if (!PyErr_Occurred())
    return std::nullopt;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  PyRef explain = PyRef::steal(PyObject_GetAttrString(session_.get(), "explain_undecidable"));
  PyRef message =
      explain ? PyRef::steal(PyObject_CallOneArg(explain.get(), value ? value : Py_None)) : PyRef();
  if (!message || !PyUnicode_Check(message.get())) {
    // Not torch's data-dependent refusal (or the explanation failed): the
    // original exception stands.
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return std::nullopt;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return python::utf8Of(message.get()).value_or("");
}

llvm::Expected<ir::Comparison> PythonTensorOracle::comparison(PyObject* item,
                                                              SymSubstitution& substitution) {
  llvm::Expected<ir::SymExpr> lhs = symExpr(PyTuple_GET_ITEM(item, 0));
  if (!lhs)
    return lhs.takeError();
  llvm::Expected<ir::SymExpr> rhs = symExpr(PyTuple_GET_ITEM(item, 2));
  if (!rhs)
    return rhs.takeError();
  std::string op = python::utf8Of(PyTuple_GET_ITEM(item, 1)).value_or("");
  ir::RelationKind kind = llvm::StringSwitch<ir::RelationKind>(op)
                              .Case("==", ir::RelationKind::Eq)
                              .Case("!=", ir::RelationKind::Ne)
                              .Case("<", ir::RelationKind::Lt)
                              .Case("<=", ir::RelationKind::Le)
                              .Case(">", ir::RelationKind::Gt)
                              .Default(ir::RelationKind::Ge);
  return ir::Comparison{substitution.apply(*lhs), kind, substitution.apply(*rhs)};
}

llvm::Error PythonTensorOracle::finalize() {
  if (finalized_)
    return makeError("the tensor oracle was already finalized");
  finalized_ = true;
  PyRef result = callMethod(finalizeMethod_.get(), {});
  if (!result)
    return pythonError("translating the shape environment");
  PyObject* symbols = PyTuple_GET_ITEM(result.get(), 0);
  PyObject* substitutions = PyTuple_GET_ITEM(result.get(), 1);
  PyObject* relations = PyTuple_GET_ITEM(result.get(), 2);

  llvm::StringMap<ir::SymExpr> replacements;
  for (Py_ssize_t i = 0, e = PyList_GET_SIZE(substitutions); i < e; ++i) {
    PyObject* item = PyList_GET_ITEM(substitutions, i);
    llvm::Expected<ir::SymExpr> value = symExpr(PyTuple_GET_ITEM(item, 1));
    if (!value)
      return value.takeError();
    replacements[python::utf8Of(PyTuple_GET_ITEM(item, 0)).value_or("")] = *value;
  }
  SymSubstitution substitution(std::move(replacements));
  substitution.apply(graph_);
  for (ir::Graph* subgraph : subgraphs_)
    substitution.apply(*subgraph);
  for (ir::Graph* backward : backwardGraphs())
    substitution.apply(*backward);

  for (Py_ssize_t i = 0, e = PyList_GET_SIZE(symbols); i < e; ++i) {
    PyObject* item = PyList_GET_ITEM(symbols, i);
    ir::SymbolRange range;
    for (int end = 0; end < 2; ++end) {
      PyObject* bound = PyTuple_GET_ITEM(item, 1 + end);
      if (bound != Py_None)
        (end == 0 ? range.lo : range.hi) = PyLong_AsLongLong(bound);
    }
    builder_.declareSymbol(python::utf8Of(PyTuple_GET_ITEM(item, 0)).value_or(""), range,
                           /*unbacked=*/PyTuple_GET_ITEM(item, 4) == Py_True);
    // What narrowed the declared range, for the driver's notes.
    graph_.symbols().back().origin = python::utf8Of(PyTuple_GET_ITEM(item, 3)).value_or("");
  }

  for (Py_ssize_t i = 0, e = PyList_GET_SIZE(relations); i < e; ++i) {
    // (lhs, op, rhs, origin), and for a disjunction a fifth item, the
    // alternatives as (lhs, op, rhs).
    PyObject* item = PyList_GET_ITEM(relations, i);
    llvm::Expected<ir::Comparison> first = comparison(item, substitution);
    if (!first)
      return first.takeError();
    builder_.addRelation(first->lhs, first->kind, first->rhs);
    ir::Relation& relation = graph_.relations().back();
    // Where the program assumed it, for the driver's notes.
    relation.origin = python::utf8Of(PyTuple_GET_ITEM(item, 3)).value_or("");
    PyObject* alternatives = PyTuple_GET_SIZE(item) > 4 ? PyTuple_GET_ITEM(item, 4) : nullptr;
    if (alternatives && !PyList_Check(alternatives))
      return makeError("the oracle gave a relation's alternatives as other than a list");
    for (Py_ssize_t j = 0, n = alternatives ? PyList_GET_SIZE(alternatives) : 0; j < n; ++j) {
      llvm::Expected<ir::Comparison> next =
          comparison(PyList_GET_ITEM(alternatives, j), substitution);
      if (!next)
        return next.takeError();
      relation.alternatives.push_back(*next);
    }
  }
  return declareSubgraphSymbols();
}

} // namespace

llvm::StringRef spelling(Decompositions decompositions) {
  switch (decompositions) {
  case Decompositions::Core:
    return "core";
  case Decompositions::Fusion:
    return "fusion";
  }
  llvm_unreachable("unknown decompositions setting");
}

llvm::Expected<bool> takeLayoutRetry() {
  llvm::Expected<PyRef> module = importEmbeddedModule("dync_oracle");
  if (!module)
    return module.takeError();
  PyRef retry = PyRef::steal(PyObject_CallMethod(module->get(), "take_layout_retry", nullptr));
  if (!retry)
    return python::takePythonError("reading the oracle's layout choices");
  return retry.get() == Py_True;
}

std::optional<Decompositions> parseDecompositions(llvm::StringRef text) {
  for (Decompositions d : {Decompositions::Core, Decompositions::Fusion})
    if (text == spelling(d))
      return d;
  return std::nullopt;
}

llvm::Expected<std::unique_ptr<TensorOracle>> TensorOracle::create(ir::Graph& graph,
                                                                   const OracleOptions& options) {
  auto oracle = std::make_unique<PythonTensorOracle>(graph, options);
  if (llvm::Error error = oracle->start())
    return error;
  return std::unique_ptr<TensorOracle>(std::move(oracle));
}

} // namespace dync::oracle
