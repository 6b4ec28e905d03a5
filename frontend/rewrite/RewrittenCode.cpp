//===- RewrittenCode.cpp - The bytecode that runs a compiled graph --------===//
//
// The body is emitted as bytecode::Instructions and laid out by the toolkit's
// encoder, which writes the inline caches, the location table and
// co_stacksize. While emitting, the depth of the value stack is tracked with
// the toolkit's stack effects, so the graph's result tuple can stay on the
// stack and be reached with COPY: the code object then keeps exactly the
// original's local slots, which the frame hook fills from the original frame
// and the guards read.
//
// The body is straight-line code except for min and max of symbolic sizes,
// which compare and branch rather than call the builtins, whose names the
// module could rebind.
//
//===----------------------------------------------------------------------===//
#include "frontend/rewrite/RewrittenCode.h"

#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/bytecode/StackEffect.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "ir/Source.h"
#include "ir/TensorAttributes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <Python.h>
#include <marshal.h>

#include <cstring>
#include <limits>
#include <map>
#include <optional>

namespace dync::rewrite {

namespace {

using bytecode::Instruction;
using bytecode::OpcodeTable;
using bytecode::StackEffects;
using python::PyRef;

// co_localspluskinds bits, CO_FAST_* of CPython 3.11's internal
// pycore_code.h (not in the public headers).
constexpr uint8_t FastCell = 0x40;
constexpr uint8_t FastFree = 0x80;

// Flags of functions whose frames are resumed later; a replaced frame cannot
// be, so such functions are never rewritten (the runtime skips them too).
constexpr int ResumableFlags =
    CO_GENERATOR | CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR;

/// Where the rewritten code reads a symbol's value: a dimension of a tensor
/// input (`<source>.shape[dim]`) or an int input that is the symbol itself.
struct SymbolBinding {
  const ir::Node* input = nullptr;
  unsigned dim = 0;
  /// The symbol is the sparse COO input's nnz: `input._nnz()`.
  bool nnz = false;
};

class Emitter {
public:
  Emitter(PyCodeObject* code, const ir::Graph& graph, const OpcodeTable& opcodes,
          const StackEffects& effects)
      : code_(code), graph_(graph), opcodes_(opcodes), effects_(effects),
        line_(code->co_firstlineno) {}

  llvm::Expected<PyObject*> build(llvm::StringRef graphGlobal);

private:
  llvm::Error fail(const llvm::Twine& what) const {
    return llvm::createStringError("cannot rewrite " + graph_.name() + ": " + what);
  }

  /// Appends \p opname with \p arg and follows its effect on the stack.
  llvm::Error emit(llvm::StringRef opname, uint32_t arg = 0);
  /// Appends a jump whose target is set by land().
  llvm::Expected<size_t> emitJump(llvm::StringRef opname);
  /// Makes \p jump target the next instruction emitted.
  void land(size_t jump) { instructions_[jump].jumpTarget = int32_t(instructions_.size()); }

  llvm::Error emitPrologue();
  void bindSymbols();
  llvm::Error loadInput(const ir::Node& input);
  llvm::Error loadSource(const ir::Source& source, const std::string& what);
  llvm::Error replaySideEffect(const ir::SideEffect& effect, const ir::Argument& value);
  llvm::Error replayHook(const ir::SideEffect& effect, const ir::Argument& value);
  llvm::Error replayCall(const ir::SideEffect& effect, const ir::Argument& value);
  llvm::Error loadHookFunction(const ir::SideEffect& effect, const ir::Argument& value);
  llvm::Error loadParsedSource(const std::string& text, const std::string& what);
  llvm::Error makeImportedFunction(const ir::SideEffect::Function& function,
                                   const ir::Argument& value, PyObject* code);
  llvm::Error buildDefaults(const ir::SideEffect::Function& function, const ir::Argument& value,
                            size_t& next);
  llvm::Error buildCells(const ir::SideEffect::Function& function, const ir::Argument& value,
                         size_t& next, const std::string& what);
  llvm::Error rebuild(const ir::Argument& arg);
  llvm::Error rebuildTypedTuple(const ir::Argument& arg);
  llvm::Error rebuildDict(const ir::Argument& arg);
  llvm::Error rebuildObject(const ir::Argument& arg);
  llvm::Error rebuildNamed(const ir::Argument& arg);
  llvm::Error loadLiteral(const ir::Argument& arg);
  llvm::Expected<PyRef> importType(const std::string& module, const std::string& qualname);
  llvm::Error loadType(llvm::StringRef module, llvm::StringRef qualname);
  llvm::Error rebuildValue(const ir::ValueRef& ref);
  llvm::Error loadSym(ir::SymExpr expr);
  llvm::Error loadProduct(llvm::ArrayRef<ir::SymExpr> factors, int64_t coefficient);
  llvm::Error loadMinMax(ir::SymExpr expr);
  llvm::Error binaryOp(llvm::StringRef symbol);

  llvm::Error loadConstant(PyRef value, const std::string& key);
  llvm::Error loadInt(int64_t value);
  uint32_t nameIndex(llvm::StringRef name);

  PyCodeObject* code_;
  const ir::Graph& graph_;
  const OpcodeTable& opcodes_;
  const StackEffects& effects_;
  int line_;
  /// The line the instructions emitted now stand for, when not line_: a
  /// replayed call's (replayCall).
  int emitLine_ = 0;

  std::vector<Instruction> instructions_;
  int depth_ = 0;
  /// co_consts and co_names of the new code, with their indices by key.
  std::vector<PyRef> consts_;
  llvm::StringMap<uint32_t> constIndex_;
  std::vector<std::string> names_;
  llvm::StringMap<uint32_t> nameIndex_;

  std::map<std::string, SymbolBinding> symbols_;
  /// The graph's tensor results, and the stack depth at which their tuple
  /// sits while the return value is rebuilt.
  std::vector<ir::ValueRef> leaves_;
  size_t nextLeaf_ = 0;
  int resultDepth_ = 0;
};

llvm::Error Emitter::emit(llvm::StringRef opname, uint32_t arg) {
  std::optional<uint8_t> opcode = opcodes_.byName(opname);
  if (!opcode)
    return llvm::createStringError("the interpreter has no opcode " + opname);
  llvm::Expected<bytecode::StackEffect> effect = effects_.effect(*opcode, arg);
  if (!effect)
    return effect.takeError();
  Instruction instruction;
  instruction.opcode = *opcode;
  instruction.arg = arg;
  // The whole body stands for the function's `def` line: it is what a
  // traceback through the rewritten code shows. A replayed call stands for
  // the line that made it.
  int line = emitLine_ > 0 ? emitLine_ : line_;
  instruction.position = {line, line, -1, -1};
  instructions_.push_back(instruction);
  depth_ += effect->fallthroughEffect();
  return llvm::Error::success();
}

llvm::Expected<size_t> Emitter::emitJump(llvm::StringRef opname) {
  if (llvm::Error error = emit(opname))
    return error;
  return instructions_.size() - 1;
}

uint32_t Emitter::nameIndex(llvm::StringRef name) {
  auto [it, inserted] = nameIndex_.try_emplace(name, names_.size());
  if (inserted)
    names_.push_back(name.str());
  return it->second;
}

/// Constants are shared by a key that tells apart what Python's `==` does
/// not (1, 1.0 and True; 0.0 and -0.0), as the compiler's constant cache does.
llvm::Error Emitter::loadConstant(PyRef value, const std::string& key) {
  if (!value)
    return python::takePythonError("making a constant");
  auto [it, inserted] = constIndex_.try_emplace(key, consts_.size());
  if (inserted)
    consts_.push_back(std::move(value));
  return emit("LOAD_CONST", it->second);
}

llvm::Error Emitter::loadInt(int64_t value) {
  return loadConstant(PyRef::steal(PyLong_FromLongLong(value)), "i" + std::to_string(value));
}

llvm::Error Emitter::binaryOp(llvm::StringRef symbol) {
  const std::vector<std::string>& ops = opcodes_.binaryOps();
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i] == symbol)
      return emit("BINARY_OP", uint32_t(i));
  return llvm::createStringError("the interpreter has no binary operator " + symbol);
}

/// What CPython 3.11's compiler puts before the first line of a function:
/// free variables copied from the closure, cells made, then RESUME. The
/// graph's inputs are read after it, so a cell argument is read as a cell.
llvm::Error Emitter::emitPrologue() {
  int freeVars = 0;
  const auto* kinds =
      reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(code_->co_localspluskinds));
  for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(code_->co_localspluskinds); ++i)
    if (kinds[i] & FastFree)
      ++freeVars;
  if (freeVars > 0)
    if (llvm::Error error = emit("COPY_FREE_VARS", uint32_t(freeVars)))
      return error;
  for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(code_->co_localspluskinds); ++i)
    if (kinds[i] & FastCell)
      if (llvm::Error error = emit("MAKE_CELL", uint32_t(i)))
        return error;
  return emit("RESUME", 0);
}

/// Each symbol is read where the graph's types first show it bare: an int
/// input that is the symbol, else the first tensor input with it as a size.
void Emitter::bindSymbols() {
  for (const ir::Node& input : graph_.inputs()) {
    const ir::Type& type = input.type();
    if (type.kind() == ir::Type::Kind::Int && type.intValue() && type.intValue().isSymbol())
      symbols_[type.intValue().symbolName().str()] = {&input, 0};
  }
  for (const ir::Node& input : graph_.inputs()) {
    const ir::Type& type = input.type();
    if (!type.isTensor())
      continue;
    for (auto [dim, size] : llvm::enumerate(type.sizes()))
      if (size.isSymbol())
        symbols_.try_emplace(size.symbolName().str(), SymbolBinding{&input, unsigned(dim)});
    if (ir::SymExpr nnz = type.nnz(); nnz && nnz.isSymbol())
      symbols_.try_emplace(nnz.symbolName().str(), SymbolBinding{&input, 0, /*nnz=*/true});
  }
}

llvm::Error Emitter::loadInput(const ir::Node& input) {
  llvm::Expected<ir::SourcePtr> source = ir::Source::parse(input.source());
  if (!source)
    return fail("input %" + input.name() + ": " + llvm::toString(source.takeError()));
  return loadSource(**source, "input %" + input.name());
}

/// The Python object a dict key source names (a new reference; null with
/// a Python error set if it cannot be made).
static PyRef keyObject(const ir::DictKey& key) {
  switch (key.kind) {
  case ir::DictKey::Kind::Int:
    return PyRef::steal(PyLong_FromLongLong(key.intValue));
  case ir::DictKey::Kind::Str:
    return PyRef::steal(PyUnicode_FromStringAndSize(key.strValue.data(), key.strValue.size()));
  case ir::DictKey::Kind::Bool:
    return PyRef::borrow(key.boolValue ? Py_True : Py_False);
  case ir::DictKey::Kind::Float:
    return PyRef::steal(PyFloat_FromDouble(key.floatValue));
  case ir::DictKey::Kind::None:
    return PyRef::borrow(Py_None);
  case ir::DictKey::Kind::Tuple: {
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(key.elements.size())));
    for (size_t i = 0; tuple && i < key.elements.size(); ++i) {
      PyRef element = keyObject(key.elements[i]);
      if (!element)
        return PyRef();
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), element.release());
    }
    return tuple;
  }
  }
  return PyRef();
}

llvm::Error Emitter::loadSource(const ir::Source& source, const std::string& what) {
  switch (source.kind()) {
  case ir::Source::Kind::Local: {
    // Only arguments (and free variables) are bound when the body starts;
    // a cell argument is read through its cell, made by the prologue.
    PyObject* names = code_->co_localsplusnames;
    const auto* kinds =
        reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(code_->co_localspluskinds));
    int arguments = code_->co_argcount + code_->co_kwonlyargcount +
                    ((code_->co_flags & CO_VARARGS) ? 1 : 0) +
                    ((code_->co_flags & CO_VARKEYWORDS) ? 1 : 0);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
      if (python::utf8Of(PyTuple_GET_ITEM(names, i)).value_or("") != source.name())
        continue;
      if (kinds[i] & FastFree)
        return emit("LOAD_DEREF", uint32_t(i));
      if (i >= arguments)
        break;
      return emit((kinds[i] & FastCell) ? "LOAD_DEREF" : "LOAD_FAST", uint32_t(i));
    }
    return fail(what + " is read from " + source.str() + ", but '" + source.name() +
                "' is not an argument or free variable of the function");
  }
  case ir::Source::Kind::Global:
    // LOAD_GLOBAL's argument is the name index shifted left; the low bit
    // (push a NULL for a call) is off.
    return emit("LOAD_GLOBAL", nameIndex(source.name()) << 1);
  case ir::Source::Kind::Attr:
    if (llvm::Error error = loadSource(*source.base(), what))
      return error;
    return emit("LOAD_ATTR", nameIndex(source.name()));
  case ir::Source::Kind::Item: {
    if (llvm::Error error = loadSource(*source.base(), what))
      return error;
    llvm::Error key = llvm::Error::success();
    if (source.hasIndex()) {
      key = loadInt(source.indexValue());
    } else if (const ir::DictKey* typed = source.typedKey()) {
      // A bool, float, None or tuple key, one constant of the code.
      std::string text;
      llvm::raw_string_ostream os(text);
      typed->print(os, /*python=*/true);
      key = loadConstant(keyObject(*typed), "k" + text);
    } else {
      key = loadConstant(
          PyRef::steal(PyUnicode_FromStringAndSize(source.name().data(), source.name().size())),
          "s" + source.name());
    }
    if (key)
      return key;
    return emit("BINARY_SUBSCR");
  }
  case ir::Source::Kind::ValueAt:
  case ir::Source::Kind::KeyAt:
    return fail(what + " is read from " + source.str() +
                ", a position in a dict, which only guards read");
  case ir::Source::Kind::Cell: {
    // A tensor a closure cell holds: base.__closure__[i].cell_contents,
    // the read the guard makes.
    if (llvm::Error error = loadSource(*source.base(), what))
      return error;
    if (llvm::Error error = emit("LOAD_ATTR", nameIndex("__closure__")))
      return error;
    if (llvm::Error error = loadInt(source.indexValue()))
      return error;
    if (llvm::Error error = emit("BINARY_SUBSCR"))
      return error;
    return emit("LOAD_ATTR", nameIndex("cell_contents"));
  }
  case ir::Source::Kind::ClassAttr:
    // A tensor a class attribute holds: type(base).name, the read the guard
    // makes (base.__class__ may be a property that says otherwise). `type`
    // is builtins.type, not whatever the function's globals call `type`.
    if (llvm::Error error = emit("PUSH_NULL"))
      return error;
    if (llvm::Error error = loadType("builtins", "type"))
      return error;
    if (llvm::Error error = loadSource(*source.base(), what))
      return error;
    if (llvm::Error error = emit("PRECALL", 1))
      return error;
    if (llvm::Error error = emit("CALL", 1))
      return error;
    return emit("LOAD_ATTR", nameIndex(source.name()));
  case ir::Source::Kind::Module: {
    // A tensor another module's function reads from its own globals:
    // sys.modules[name], as the guards find the module. `from NAME import
    // __name__` makes IMPORT_NAME give the module itself, not its package.
    if (llvm::Error error = loadInt(0))
      return error;
    PyRef fromList = PyRef::steal(Py_BuildValue("(s)", "__name__"));
    if (llvm::Error error = loadConstant(std::move(fromList), "t(__name__)"))
      return error;
    return emit("IMPORT_NAME", nameIndex(source.name()));
  }
  }
  return fail(what + " has a source of unknown kind");
}

/// What the program did to an object of the caller's, done again to the
/// real object after the graph ran:
///
///   set <base>.name = v:  <v>; <base>; STORE_ATTR name
///   set G['name'] = v:    <v>; STORE_GLOBAL name
///   fill <list> = v:      <v>; <list>; LOAD_CONST None; LOAD_CONST None;
///                         BUILD_SLICE 2; STORE_SUBSCR      (list[:] = v)
///   fill <dict> = v:      <dict>; LOAD_METHOD clear; PRECALL 0; CALL 0; POP_TOP;
///                         <dict>; LOAD_METHOD update; <v>; PRECALL 1; CALL 1;
///                         POP_TOP                        (keys in v's order)
///   extend <list> = v:    <list>; LOAD_METHOD extend; <v>; PRECALL 1; CALL 1;
///                         POP_TOP       (what the program appended to a list
///                                        whose items it never read)
///   update <dict> = v:    <dict>; LOAD_METHOD update; <v>; PRECALL 1; CALL 1;
///                         POP_TOP       (the entries the program assigned in
///                                        a dict whose others it never read)
///
/// STORE_ATTR goes through the object's own __setattr__ (nn.Module's files
/// a tensor or a plain value as eager's assignment did).
llvm::Error Emitter::replaySideEffect(const ir::SideEffect& effect, const ir::Argument& value) {
  if (effect.kind == ir::SideEffect::Kind::Hook)
    return replayHook(effect, value);
  if (effect.kind == ir::SideEffect::Kind::Call)
    return replayCall(effect, value);
  llvm::Expected<ir::SourcePtr> target = ir::Source::parse(effect.target);
  if (!target)
    return fail("side effect on " + effect.target + ": " + llvm::toString(target.takeError()));
  std::string what = "the side effect on " + effect.target;
  const ir::Source& source = **target;
  if (effect.kind == ir::SideEffect::Kind::Set) {
    if (llvm::Error error = rebuild(value))
      return error;
    if (source.kind() == ir::Source::Kind::Global)
      return emit("STORE_GLOBAL", nameIndex(source.name()));
    if (source.kind() != ir::Source::Kind::Attr)
      return fail(what + ": only attributes and globals are assigned");
    if (llvm::Error error = loadSource(*source.base(), what))
      return error;
    return emit("STORE_ATTR", nameIndex(source.name()));
  }
  if (effect.kind == ir::SideEffect::Kind::Extend || effect.kind == ir::SideEffect::Kind::Update) {
    bool extend = effect.kind == ir::SideEffect::Kind::Extend;
    if (value.kind() != (extend ? ir::Argument::Kind::List : ir::Argument::Kind::Dict))
      return fail(what +
                  (extend ? ": a list is extended by a list" : ": a dict is updated from a dict"));
    if (llvm::Error error = loadSource(source, what))
      return error;
    if (llvm::Error error = emit("LOAD_METHOD", nameIndex(extend ? "extend" : "update")))
      return error;
    if (llvm::Error error = rebuild(value))
      return error;
    if (llvm::Error error = emit("PRECALL", 1))
      return error;
    if (llvm::Error error = emit("CALL", 1))
      return error;
    return emit("POP_TOP");
  }
  if (value.kind() == ir::Argument::Kind::List) {
    if (llvm::Error error = rebuild(value))
      return error;
    if (llvm::Error error = loadSource(source, what))
      return error;
    for (int bound = 0; bound < 2; ++bound)
      if (llvm::Error error = loadConstant(PyRef::borrow(Py_None), "None"))
        return error;
    if (llvm::Error error = emit("BUILD_SLICE", 2))
      return error;
    return emit("STORE_SUBSCR");
  }
  if (value.kind() != ir::Argument::Kind::Dict)
    return fail(what + ": a container is refilled from a list or a dict");
  for (const char* method : {"clear", "update"}) {
    if (llvm::Error error = loadSource(source, what))
      return error;
    if (llvm::Error error = emit("LOAD_METHOD", nameIndex(method)))
      return error;
    bool update = llvm::StringRef(method) == "update";
    if (update)
      if (llvm::Error error = rebuild(value))
        return error;
    if (llvm::Error error = emit("PRECALL", update ? 1 : 0))
      return error;
    if (llvm::Error error = emit("CALL", update ? 1 : 0))
      return error;
    if (llvm::Error error = emit("POP_TOP"))
      return error;
  }
  return llvm::Error::success();
}

/// A call into the world (SideEffect::Kind::Call), made on the real
/// objects with the values the program passed:
///
///   PUSH_NULL; <target> [LOAD_ATTR method]; <args tuple>; <kwargs dict>;
///   CALL_FUNCTION_EX 1; POP_TOP
///
/// The method is read from the object at this point, as the program read
/// it, so a logger's own methods (and a library's memo, `warning_once`'s
/// cache) decide in the caller's process. Its instructions carry the line
/// the call was made from, which the logging module and warnings.warn read
/// from the frame for the record's line and the once-per-line registry.
llvm::Error Emitter::replayCall(const ir::SideEffect& effect, const ir::Argument& value) {
  if (value.kind() != ir::Argument::Kind::Tuple || value.elements().size() != 2)
    return fail("the call of " + effect.target + " holds no (args, kwargs) pair");
  std::string what = "the call of " + effect.target;
  struct LineScope {
    int& line;
    int saved;
    ~LineScope() { line = saved; }
  } scope{emitLine_, emitLine_};
  if (effect.line >= line_ && effect.line <= std::numeric_limits<int>::max())
    emitLine_ = static_cast<int>(effect.line);
  if (llvm::Error error = emit("PUSH_NULL"))
    return error;
  if (llvm::Error error = loadParsedSource(effect.target, what))
    return error;
  if (!effect.method.empty())
    if (llvm::Error error = emit("LOAD_ATTR", nameIndex(effect.method)))
      return error;
  if (llvm::Error error = rebuild(value.elements()[0]))
    return error;
  if (llvm::Error error = rebuild(value.elements()[1]))
    return error;
  if (llvm::Error error = emit("CALL_FUNCTION_EX", 1))
    return error;
  return emit("POP_TOP");
}

llvm::Error Emitter::loadParsedSource(const std::string& text, const std::string& what) {
  llvm::Expected<ir::SourcePtr> source = ir::Source::parse(text);
  if (!source)
    return fail(what + " reads " + text + ": " + llvm::toString(source.takeError()));
  return loadSource(**source, what);
}

/// A hook registration (SideEffect::Kind::Hook) on a tensor the graph
/// returned, before the caller can run backward:
///
///   <tensor>; LOAD_METHOD register_hook; <function>; PRECALL 1; CALL 1; POP_TOP
///
/// The handle register_hook returns is dropped, as the program dropped it.
llvm::Error Emitter::replayHook(const ir::SideEffect& effect, const ir::Argument& value) {
  if (value.kind() != ir::Argument::Kind::Tuple || value.elements().empty())
    return fail("the hook registration holds no tensor");
  if (llvm::Error error = rebuild(value.elements()[0]))
    return error;
  if (llvm::Error error = emit("LOAD_METHOD", nameIndex(effect.hookMethod)))
    return error;
  if (llvm::Error error = loadHookFunction(effect, value))
    return error;
  if (llvm::Error error = emit("PRECALL", 1))
    return error;
  if (llvm::Error error = emit("CALL", 1))
    return error;
  return emit("POP_TOP");
}

/// Finds, among the code objects nested in \p code (its co_consts, and
/// theirs), the one with qualified name \p qualname first defined at \p
/// line; null if none is.
static PyObject* nestedCode(PyObject* code, const std::string& qualname, int64_t line) {
  PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
    PyObject* item = PyTuple_GET_ITEM(consts, i);
    if (!PyCode_Check(item))
      continue;
    auto* nested = reinterpret_cast<PyCodeObject*>(item);
    if (nested->co_firstlineno == line &&
        python::utf8Of(nested->co_qualname).value_or("") == qualname)
      return item;
    if (PyObject* found = nestedCode(item, qualname, line))
      return found;
  }
  return nullptr;
}

/// The function a hook registration gives. One read through a source is
/// loaded from it. One the program made is made again as the program made
/// it, by MAKE_FUNCTION in the function's globals (the module's, which the
/// rewritten code runs over), from its code object, found now, at export,
/// by its module, qualified name and line:
///
///   [<default>... BUILD_TUPLE n]                          (flag 0x01)
///   [PUSH_NULL; types.CellType; <contents>; PRECALL 1; CALL 1 ... BUILD_TUPLE k]
///                                                         (flag 0x08)
///   LOAD_CONST <code>; MAKE_FUNCTION flags
///
/// Each cell is a new one holding what the program's cell held when the
/// function returned: the frame that made the function is gone by the time
/// backward runs, and only functions it made share the cell.
llvm::Error Emitter::loadHookFunction(const ir::SideEffect& effect, const ir::Argument& value) {
  const ir::SideEffect::Function& function = effect.hookFunction;
  std::string what = "the function " + effect.hookMethod + " registers";
  if (!function.source.empty())
    return loadParsedSource(function.source, what);
  // The function defined (as `def` or `lambda`) inside a function or method
  // the module defines: walk the qualified name to the part before
  // `<locals>`, then search its code.
  PyRef outer = PyRef::steal(PyImport_ImportModule(function.module.c_str()));
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(function.qualname).split(parts, '.');
  for (llvm::StringRef part : parts) {
    if (!outer || part == "<locals>")
      break;
    outer = PyRef::steal(PyObject_GetAttrString(outer.get(), part.str().c_str()));
  }
  PyRef outerCode = outer ? PyRef::steal(PyObject_GetAttrString(outer.get(), "__code__")) : PyRef();
  PyErr_Clear();
  PyObject* code = outerCode && PyCode_Check(outerCode.get())
                       ? nestedCode(outerCode.get(), function.qualname, function.line)
                       : nullptr;
  if (!code)
    return fail(what + ", " + function.module + ":" + function.qualname + " (line " +
                std::to_string(function.line) +
                "), has no code object the module's functions define there");
  if (function.imported)
    return makeImportedFunction(function, value, code);
  size_t next = 1;
  uint32_t flags = 0;
  if (function.defaults) {
    if (llvm::Error error = buildDefaults(function, value, next))
      return error;
    flags |= 0x01;
  }
  if (!function.cells.empty()) {
    if (llvm::Error error = buildCells(function, value, next, what))
      return error;
    flags |= 0x08;
  }
  if (llvm::Error error =
          loadConstant(PyRef::borrow(code), "code " + function.module + ":" + function.qualname +
                                                ":" + std::to_string(function.line)))
    return error;
  return emit("MAKE_FUNCTION", flags);
}

/// A function another module defines is made over that module's globals,
/// imported by name as typed tuples' types are:
///
///   PUSH_NULL; types.FunctionType; LOAD_CONST <code>; <module>.__dict__;
///   LOAD_CONST None; <defaults tuple or None>; <cells tuple or None>;
///   PRECALL 5; CALL 5
///
/// i.e. `FunctionType(code, module.__dict__, None, defaults, closure)`,
/// whose name and qualified name are the code's, as MAKE_FUNCTION's are.
llvm::Error Emitter::makeImportedFunction(const ir::SideEffect::Function& function,
                                          const ir::Argument& value, PyObject* code) {
  if (llvm::Error error = emit("PUSH_NULL"))
    return error;
  if (llvm::Error error = loadType("types", "FunctionType"))
    return error;
  if (llvm::Error error =
          loadConstant(PyRef::borrow(code), "code " + function.module + ":" + function.qualname +
                                                ":" + std::to_string(function.line)))
    return error;
  if (llvm::Error error = loadType(function.module, "__dict__"))
    return error;
  if (llvm::Error error = loadConstant(PyRef::borrow(Py_None), "None"))
    return error;
  size_t next = 1;
  if (llvm::Error error = function.defaults ? buildDefaults(function, value, next)
                                            : loadConstant(PyRef::borrow(Py_None), "None"))
    return error;
  if (llvm::Error error =
          function.cells.empty()
              ? loadConstant(PyRef::borrow(Py_None), "None")
              : buildCells(function, value, next, "the function a hook registration gives"))
    return error;
  if (llvm::Error error = emit("PRECALL", 5))
    return error;
  return emit("CALL", 5);
}

/// The tuple of a made function's defaults, rebuilt from the values after
/// \p next in \p value (which it advances).
llvm::Error Emitter::buildDefaults(const ir::SideEffect::Function& function,
                                   const ir::Argument& value, size_t& next) {
  for (size_t i = 0; i < function.defaults; ++i)
    if (llvm::Error error = rebuild(value.elements()[next++]))
      return error;
  return emit("BUILD_TUPLE", uint32_t(function.defaults));
}

/// The tuple of a made function's closure: a new `types.CellType(...)` for
/// each cell, holding what its source reads or, for a cell with no source,
/// the next value in \p value.
llvm::Error Emitter::buildCells(const ir::SideEffect::Function& function, const ir::Argument& value,
                                size_t& next, const std::string& what) {
  for (const auto& [name, source] : function.cells) {
    if (llvm::Error error = emit("PUSH_NULL"))
      return error;
    if (llvm::Error error = loadType("types", "CellType"))
      return error;
    if (llvm::Error error =
            source.empty() ? rebuild(value.elements()[next++]) : loadParsedSource(source, what))
      return error;
    if (llvm::Error error = emit("PRECALL", 1))
      return error;
    if (llvm::Error error = emit("CALL", 1))
      return error;
  }
  return emit("BUILD_TUPLE", uint32_t(function.cells.size()));
}

llvm::Error Emitter::rebuild(const ir::Argument& arg) {
  using Kind = ir::Argument::Kind;
  switch (arg.kind()) {
  case Kind::Value:
    return rebuildValue(arg.valueRef());
  case Kind::Sym:
    return loadSym(arg.symValue());
  case Kind::Float: {
    double value = arg.floatValue();
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return loadConstant(PyRef::steal(PyFloat_FromDouble(value)), "f" + std::to_string(bits));
  }
  case Kind::Complex: {
    std::complex<double> value = arg.complexValue();
    uint64_t bits[2];
    double parts[2] = {value.real(), value.imag()};
    std::memcpy(bits, parts, sizeof bits);
    return loadConstant(PyRef::steal(PyComplex_FromDoubles(parts[0], parts[1])),
                        "c" + std::to_string(bits[0]) + "_" + std::to_string(bits[1]));
  }
  case Kind::Bool:
    return loadConstant(PyRef::borrow(arg.boolValue() ? Py_True : Py_False),
                        arg.boolValue() ? "True" : "False");
  case Kind::None:
    return loadConstant(PyRef::borrow(Py_None), "None");
  case Kind::String: {
    const std::string& text = arg.stringValue();
    return loadConstant(PyRef::steal(PyUnicode_FromStringAndSize(text.data(), text.size())),
                        "s" + text);
  }
  case Kind::List:
  case Kind::Tuple:
    if (arg.hasTupleType())
      return rebuildTypedTuple(arg);
    for (const ir::Argument& element : arg.elements())
      if (llvm::Error error = rebuild(element))
        return error;
    return emit(arg.kind() == Kind::List ? "BUILD_LIST" : "BUILD_TUPLE",
                uint32_t(arg.elements().size()));
  case Kind::Dict:
    return rebuildDict(arg);
  case Kind::Object:
    return rebuildObject(arg);
  case Kind::Named:
    return rebuildNamed(arg);
  // torch's own objects, loaded by name: `torch.bfloat16`, `torch.strided`,
  // `torch.channels_last`; a device is made from its text, `torch.device("cpu")`.
  case Kind::DType:
    return loadType("torch", ir::torchName(arg.dtypeValue()));
  case Kind::Layout:
    return loadType("torch", ir::spelling(arg.layoutValue()));
  case Kind::MemoryFormat:
    return loadType("torch", ir::spelling(arg.memoryFormatValue()));
  case Kind::Device: {
    std::string text;
    llvm::raw_string_ostream os(text);
    arg.deviceValue().print(os);
    if (llvm::Error error = emit("PUSH_NULL"))
      return error;
    if (llvm::Error error = loadType("torch", "device"))
      return error;
    if (llvm::Error error = loadConstant(
            PyRef::steal(PyUnicode_FromStringAndSize(text.data(), text.size())), "s" + text))
      return error;
    if (llvm::Error error = emit("PRECALL", 1))
      return error;
    return emit("CALL", 1);
  }
  }
  llvm_unreachable("every kind of argument is rebuilt above");
}

/// Tuples of another type are built the way each kind of type is:
///
///   named tuple (collections.namedtuple, typing.NamedTuple):
///     <type>; LOAD_METHOD _make; <elements>; BUILD_TUPLE n; PRECALL 1; CALL 1
///   structseq (torch.return_types.*) and torch.Size:
///     PUSH_NULL; <type>; <elements>; BUILD_TUPLE n; PRECALL 1; CALL 1
///
/// `_make` rather than calling the class, since it fills the fields from
/// the tuple without going through a __new__ a subclass may have replaced.
/// Which kind a type is is decided now, at export, on the type the name
/// resolves to; the code then resolves the same name at run time.
llvm::Error Emitter::rebuildTypedTuple(const ir::Argument& arg) {
  const std::string& module = arg.tupleTypeModule();
  const std::string& qualname = arg.tupleTypeQualname();
  std::string name = module + ":" + qualname;
  PyRef type = PyRef::steal(PyImport_ImportModule(module.c_str()));
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(qualname).split(parts, '.');
  for (llvm::StringRef part : parts)
    if (type)
      type = PyRef::steal(PyObject_GetAttrString(type.get(), part.str().c_str()));
  if (!type || !PyType_Check(type.get()) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type.get()), &PyTuple_Type)) {
    std::string why = "it is not a tuple type";
    if (!type)
      why = llvm::toString(python::takePythonError("importing it"));
    return fail("the function returns a " + name + ", whose type the rewritten code cannot " +
                "import by its module and qualified name (" + why + ")");
  }
  auto hasAttr = [&](const char* attr) { return PyObject_HasAttrString(type.get(), attr) == 1; };
  bool namedTuple = hasAttr("_make") && hasAttr("_fields");
  bool structSeq = hasAttr("n_sequence_fields");
  bool size = module == "torch" && qualname == "Size";
  if (!namedTuple && !structSeq && !size)
    return fail("the function returns a " + name +
                ", a tuple type the rewritten code does not know how to construct (it rebuilds "
                "named tuples, structseqs such as torch.return_types.max, and torch.Size)");

  if (!namedTuple)
    if (llvm::Error error = emit("PUSH_NULL"))
      return error;
  if (llvm::Error error = loadType(module, qualname))
    return error;
  if (namedTuple)
    if (llvm::Error error = emit("LOAD_METHOD", nameIndex("_make")))
      return error;
  for (const ir::Argument& element : arg.elements())
    if (llvm::Error error = rebuild(element))
      return error;
  if (llvm::Error error = emit("BUILD_TUPLE", uint32_t(arg.elements().size())))
    return error;
  if (llvm::Error error = emit("PRECALL", 1))
    return error;
  return emit("CALL", 1);
}

/// An object imported by name (a class, a function, an enum member, a
/// module), found again at run time as the program found it:
///
///   LOAD_CONST 0; LOAD_CONST None; IMPORT_NAME <module>; LOAD_ATTR <part>...
///
/// The name is resolved now too, so an artifact never holds a name that
/// did not import when it was made.
llvm::Error Emitter::rebuildNamed(const ir::Argument& arg) {
  const std::string& module = arg.typeModule();
  const std::string& qualname = arg.typeQualname();
  PyRef object = PyRef::steal(PyImport_ImportModule(module.c_str()));
  llvm::SmallVector<llvm::StringRef> parts;
  if (!qualname.empty())
    llvm::StringRef(qualname).split(parts, '.');
  for (llvm::StringRef part : parts)
    if (object)
      object = PyRef::steal(PyObject_GetAttrString(object.get(), part.str().c_str()));
  if (!object)
    return fail("the object " + module + (qualname.empty() ? "" : ":" + qualname) +
                " cannot be imported by its module and qualified name (" +
                llvm::toString(python::takePythonError("importing it")) + ")");
  return loadType(module, qualname);
}

/// A literal: a dict key. Constant ints are symbolic integers of one term.
llvm::Error Emitter::loadLiteral(const ir::Argument& arg) {
  if (arg.kind() == ir::Argument::Kind::Sym && !arg.symValue().isConstant())
    return fail("a dict key is not a constant");
  return rebuild(arg);
}

/// The class \p module:\p qualname names, imported now, at export, to
/// decide how to build its objects; the code resolves the same name at
/// run time.
llvm::Expected<PyRef> Emitter::importType(const std::string& module, const std::string& qualname) {
  PyRef type = PyRef::steal(PyImport_ImportModule(module.c_str()));
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(qualname).split(parts, '.');
  for (llvm::StringRef part : parts)
    if (type)
      type = PyRef::steal(PyObject_GetAttrString(type.get(), part.str().c_str()));
  if (!type || !PyType_Check(type.get())) {
    std::string why =
        type ? "it is not a class" : llvm::toString(python::takePythonError("importing it"));
    return fail("the function returns a " + module + ":" + qualname +
                ", whose type the rewritten code cannot import by its module and qualified "
                "name (" +
                why + ")");
  }
  return type;
}

/// Dicts are built as the program built them, keys in order:
///
///   dict:                 <k0> <v0> ... BUILD_MAP n
///   collections.OrderedDict (exactly):
///     PUSH_NULL; <type>; <k0> <v0> BUILD_TUPLE 2 ...; BUILD_TUPLE n; PRECALL 1; CALL 1
///
/// i.e. `OrderedDict(((k0, v0), ...))`, which inserts in that order.
llvm::Error Emitter::rebuildDict(const ir::Argument& arg) {
  const std::vector<ir::Argument>& keys = arg.dictKeys();
  const std::vector<ir::Argument>& values = arg.elements();
  bool ordered = false;
  if (arg.hasTypeName()) {
    llvm::Expected<PyRef> type = importType(arg.typeModule(), arg.typeQualname());
    if (!type)
      return type.takeError();
    PyRef orderedDict = PyRef::steal(PyImport_ImportModule("collections"));
    if (orderedDict)
      orderedDict = PyRef::steal(PyObject_GetAttrString(orderedDict.get(), "OrderedDict"));
    if (!orderedDict)
      return python::takePythonError("importing collections.OrderedDict");
    if (type->get() != orderedDict.get())
      return fail("the function returns a " + arg.typeModule() + ":" + arg.typeQualname() +
                  ", a dict type the rewritten code does not know how to construct (it "
                  "rebuilds dict and collections.OrderedDict)");
    ordered = true;
    if (llvm::Error error = emit("PUSH_NULL"))
      return error;
    if (llvm::Error error = loadType(arg.typeModule(), arg.typeQualname()))
      return error;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (llvm::Error error = loadLiteral(keys[i]))
      return error;
    if (llvm::Error error = rebuild(values[i]))
      return error;
    if (ordered)
      if (llvm::Error error = emit("BUILD_TUPLE", 2))
        return error;
  }
  if (!ordered)
    return emit("BUILD_MAP", uint32_t(values.size()));
  if (llvm::Error error = emit("BUILD_TUPLE", uint32_t(values.size())))
    return error;
  if (llvm::Error error = emit("PRECALL", 1))
    return error;
  return emit("CALL", 1);
}

/// An object made while capturing gets back its class and its instance
/// attributes, set in the order the program set them, without running its
/// __init__ again (which ran, symbolically, while capturing):
///
///   PUSH_NULL; builtins.object.__new__; <type>; PRECALL 1; CALL 1
///   per attribute:
///     PUSH_NULL; builtins.object.__setattr__; COPY <object>; <name>; <value>;
///     PRECALL 3; CALL 3; POP_TOP
///
/// `object.__setattr__` stores past a frozen dataclass's __setattr__ and
/// into __slots__, as the class's own __init__ did; `builtins.object` is
/// imported, since the module could rebind the name `object`.
///
/// An object of a class deriving from dict or collections.OrderedDict (its
/// base B) is made by B.__new__ and gets its items, in order, from
/// B.__setitem__ before its attributes, past a __setitem__ of the class's
/// own (a ModelOutput's also sets an attribute). The attributes come
/// first, as the graph's results are ordered:
///
///   PUSH_NULL; <B>.__new__; <type>; PRECALL 1; CALL 1
///   per attribute, as above; then per item:
///     PUSH_NULL; <B>.__setitem__; COPY <object>; <key>; <value>;
///     PRECALL 3; CALL 3; POP_TOP
llvm::Error Emitter::rebuildObject(const ir::Argument& arg) {
  llvm::Expected<PyRef> type = importType(arg.typeModule(), arg.typeQualname());
  if (!type)
    return type.takeError();
  auto* cls = reinterpret_cast<PyTypeObject*>(type->get());
  // object.__new__(T) requires T's instances to be laid out as object's
  // (classes written in Python over object, which capture models); dict's
  // __new__, as dict's or OrderedDict's.
  PyTypeObject* base = cls;
  while (base && (base->tp_flags & Py_TPFLAGS_HEAPTYPE))
    base = base->tp_base;
  std::string baseModule = "builtins", baseName = "object";
  if (base == &PyDict_Type) {
    baseName = "dict";
  } else if (base && llvm::StringRef(base->tp_name) == "collections.OrderedDict") {
    baseModule = "collections";
    baseName = "OrderedDict";
  } else if (base != &PyBaseObject_Type) {
    return fail("the function returns a " + arg.typeModule() + ":" + arg.typeQualname() +
                ", whose objects the rewritten code cannot make (they are laid out as " +
                (base ? std::string(base->tp_name) : std::string("?")) +
                "'s; it makes objects laid out as object's, dict's and OrderedDict's)");
  }
  if (arg.hasItems() && baseName == "object")
    return fail("the function returns a " + arg.typeModule() + ":" + arg.typeQualname() +
                " with items, but its class does not derive from dict");
  auto loadMethod = [&](llvm::StringRef module, llvm::StringRef name,
                        llvm::StringRef method) -> llvm::Error {
    if (llvm::Error error = emit("PUSH_NULL"))
      return error;
    if (llvm::Error error = loadType(module, name))
      return error;
    return emit("LOAD_ATTR", nameIndex(method));
  };
  auto loadObjectMethod = [&](llvm::StringRef method) {
    return loadMethod("builtins", "object", method);
  };
  if (llvm::Error error = loadMethod(baseModule, baseName, "__new__"))
    return error;
  if (llvm::Error error = loadType(arg.typeModule(), arg.typeQualname()))
    return error;
  if (llvm::Error error = emit("PRECALL", 1))
    return error;
  if (llvm::Error error = emit("CALL", 1))
    return error;
  int objectDepth = depth_;
  size_t attributes = arg.attributeNames().size();
  for (size_t i = 0; i < attributes; ++i) {
    if (llvm::Error error = loadObjectMethod("__setattr__"))
      return error;
    if (llvm::Error error = emit("COPY", uint32_t(depth_ - objectDepth + 1)))
      return error;
    const std::string& name = arg.attributeNames()[i];
    if (llvm::Error error = loadConstant(
            PyRef::steal(PyUnicode_FromStringAndSize(name.data(), name.size())), "s" + name))
      return error;
    if (llvm::Error error = rebuild(arg.elements()[i]))
      return error;
    if (llvm::Error error = emit("PRECALL", 3))
      return error;
    if (llvm::Error error = emit("CALL", 3))
      return error;
    if (llvm::Error error = emit("POP_TOP"))
      return error;
  }
  for (size_t i = 0; i < arg.dictKeys().size() && arg.hasItems(); ++i) {
    if (llvm::Error error = loadMethod(baseModule, baseName, "__setitem__"))
      return error;
    if (llvm::Error error = emit("COPY", uint32_t(depth_ - objectDepth + 1)))
      return error;
    if (llvm::Error error = loadLiteral(arg.dictKeys()[i]))
      return error;
    if (llvm::Error error = rebuild(arg.elements()[attributes + i]))
      return error;
    if (llvm::Error error = emit("PRECALL", 3))
      return error;
    if (llvm::Error error = emit("CALL", 3))
      return error;
    if (llvm::Error error = emit("POP_TOP"))
      return error;
  }
  return llvm::Error::success();
}

/// `import <module>` pushes its top-level package; the rest of the dotted
/// module name and the qualified name are attributes from there. The
/// module is imported when the function is exported and loaded, so at run
/// time this finds it in sys.modules.
llvm::Error Emitter::loadType(llvm::StringRef module, llvm::StringRef qualname) {
  if (llvm::Error error = loadInt(0))
    return error;
  if (llvm::Error error = loadConstant(PyRef::borrow(Py_None), "None"))
    return error;
  if (llvm::Error error = emit("IMPORT_NAME", nameIndex(module)))
    return error;
  llvm::SmallVector<llvm::StringRef> parts;
  module.split(parts, '.');
  if (!qualname.empty())
    qualname.split(parts, '.');
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_front())
    if (llvm::Error error = emit("LOAD_ATTR", nameIndex(part)))
      return error;
  return llvm::Error::success();
}

llvm::Error Emitter::rebuildValue(const ir::ValueRef& ref) {
  const ir::Type* type = ref.node->resultType(ref.index);
  bool number = type && ref.node->isCall() &&
                (type->kind() == ir::Type::Kind::Float || type->kind() == ir::Type::Kind::Bool);
  if (type && (type->isTensor() || number)) {
    // The next of the graph's results: outputLeaves walks the value in the
    // same order as this.
    if (nextLeaf_ >= leaves_.size() || leaves_[nextLeaf_] != ref)
      return fail("the graph's results do not match its return value");
    if (llvm::Error error = emit("COPY", uint32_t(depth_ - resultDepth_ + 1)))
      return error;
    if (llvm::Error error = loadInt(int64_t(nextLeaf_++)))
      return error;
    if (llvm::Error error = emit("BINARY_SUBSCR"))
      return error;
    if (!number)
      return llvm::Error::success();
    // A float or bool the graph computed comes as a 0-dim tensor holding it
    // exactly: item() gives the Python number back.
    if (llvm::Error error = emit("LOAD_METHOD", nameIndex("item")))
      return error;
    if (llvm::Error error = emit("PRECALL", 0))
      return error;
    return emit("CALL", 0);
  }
  if (type && type->kind() == ir::Type::Kind::Int) {
    if (ref.node->isInput())
      return loadInput(*ref.node);
    if (type->intValue())
      return loadSym(type->intValue());
  }
  return fail("the function returns %" + ref.node->name() +
              (ref.index ? "#" + std::to_string(*ref.index) : std::string()) + " of type " +
              (type ? type->str() : std::string("?")) +
              ", which the rewritten code cannot rebuild");
}

llvm::Error Emitter::loadSym(ir::SymExpr expr) {
  switch (expr.kind()) {
  case ir::SymKind::Const:
    return loadInt(expr.constantValue());
  case ir::SymKind::Symbol: {
    auto it = symbols_.find(expr.symbolName().str());
    if (it == symbols_.end() && !leaves_.empty())
      // A data-dependent int the graph computed: one of its last results,
      // a 0-dim int64 tensor that item() turns back into the Python int.
      for (auto [i, leaf] : llvm::enumerate(leaves_)) {
        const ir::Type& type = leaf.node->type();
        if (type.kind() != ir::Type::Kind::Int || !type.intValue() || type.intValue() != expr)
          continue;
        if (llvm::Error error = emit("COPY", uint32_t(depth_ - resultDepth_ + 1)))
          return error;
        if (llvm::Error error = loadInt(int64_t(i)))
          return error;
        if (llvm::Error error = emit("BINARY_SUBSCR"))
          return error;
        if (llvm::Error error = emit("LOAD_METHOD", nameIndex("item")))
          return error;
        if (llvm::Error error = emit("PRECALL", 0))
          return error;
        return emit("CALL", 0);
      }
    if (it == symbols_.end())
      return fail("the return value uses the symbol " + expr.symbolName() +
                  ", which is neither a size of a tensor input nor an int input");
    const SymbolBinding& binding = it->second;
    if (llvm::Error error = loadInput(*binding.input))
      return error;
    if (!binding.input->type().isTensor())
      return llvm::Error::success();
    if (binding.nnz) {
      if (llvm::Error error = emit("LOAD_METHOD", nameIndex("_nnz")))
        return error;
      if (llvm::Error error = emit("PRECALL", 0))
        return error;
      return emit("CALL", 0);
    }
    if (llvm::Error error = emit("LOAD_ATTR", nameIndex("shape")))
      return error;
    if (llvm::Error error = loadInt(binding.dim))
      return error;
    return emit("BINARY_SUBSCR");
  }
  case ir::SymKind::Mul: {
    llvm::ArrayRef<ir::SymExpr> operands = expr.operands();
    if (operands.front().isConstant())
      return loadProduct(operands.drop_front(), operands.front().constantValue());
    return loadProduct(operands, 1);
  }
  case ir::SymKind::Add: {
    // Terms with a negative coefficient are subtracted, as `s0 - 1` is
    // written, unless negating the coefficient would overflow.
    for (auto [i, term] : llvm::enumerate(expr.operands())) {
      bool scaled = term.kind() == ir::SymKind::Mul && term.operands().front().isConstant();
      int64_t coefficient = term.isConstant() ? term.constantValue()
                            : scaled          ? term.operands().front().constantValue()
                                              : 1;
      bool subtract =
          i > 0 && coefficient < 0 && coefficient != std::numeric_limits<int64_t>::min();
      llvm::Error loaded = !subtract ? loadSym(term)
                           : scaled  ? loadProduct(term.operands().drop_front(), -coefficient)
                                     : loadInt(-coefficient);
      if (loaded)
        return loaded;
      if (i > 0)
        if (llvm::Error error = binaryOp(subtract ? "-" : "+"))
          return error;
    }
    return llvm::Error::success();
  }
  case ir::SymKind::FloorDiv:
  case ir::SymKind::Mod:
    if (llvm::Error error = loadSym(expr.operands()[0]))
      return error;
    if (llvm::Error error = loadSym(expr.operands()[1]))
      return error;
    return binaryOp(expr.kind() == ir::SymKind::FloorDiv ? "//" : "%");
  case ir::SymKind::Min:
  case ir::SymKind::Max:
    return loadMinMax(expr);
  }
  return fail("the return value has a symbolic integer of unknown kind");
}

/// `coefficient * f0 * f1 ...`, written as `f0 * f1 * ... * coefficient`.
llvm::Error Emitter::loadProduct(llvm::ArrayRef<ir::SymExpr> factors, int64_t coefficient) {
  for (auto [i, factor] : llvm::enumerate(factors)) {
    if (llvm::Error error = loadSym(factor))
      return error;
    if (i > 0)
      if (llvm::Error error = binaryOp("*"))
        return error;
  }
  if (coefficient == 1)
    return llvm::Error::success();
  if (coefficient == -1)
    return emit("UNARY_NEGATIVE");
  if (llvm::Error error = loadInt(coefficient))
    return error;
  return binaryOp("*");
}

/// min and max fold left over their operands, each step keeping the
/// left value unless the right one is strictly smaller (larger), which is
/// what the builtins return:
///
///   a b -> COPY 1; COPY 3; COMPARE_OP <; POP_JUMP_FORWARD_IF_TRUE take_b
///          POP_TOP; JUMP_FORWARD done
///   take_b: SWAP 2; POP_TOP
///   done:   NOP
llvm::Error Emitter::loadMinMax(ir::SymExpr expr) {
  llvm::StringRef compare = expr.kind() == ir::SymKind::Min ? "<" : ">";
  const std::vector<std::string>& compareOps = opcodes_.compareOps();
  auto compareIndex = llvm::find(compareOps, compare);
  if (compareIndex == compareOps.end())
    return llvm::createStringError("the interpreter has no comparison " + compare);
  for (auto [i, operand] : llvm::enumerate(expr.operands())) {
    if (llvm::Error error = loadSym(operand))
      return error;
    if (i == 0)
      continue;
    int pair = depth_;
    if (llvm::Error error = emit("COPY", 1))
      return error;
    if (llvm::Error error = emit("COPY", 3))
      return error;
    if (llvm::Error error = emit("COMPARE_OP", uint32_t(compareIndex - compareOps.begin())))
      return error;
    llvm::Expected<size_t> takeRight = emitJump("POP_JUMP_FORWARD_IF_TRUE");
    if (!takeRight)
      return takeRight.takeError();
    if (llvm::Error error = emit("POP_TOP"))
      return error;
    llvm::Expected<size_t> done = emitJump("JUMP_FORWARD");
    if (!done)
      return done.takeError();
    land(*takeRight);
    depth_ = pair;
    if (llvm::Error error = emit("SWAP", 2))
      return error;
    if (llvm::Error error = emit("POP_TOP"))
      return error;
    land(*done);
    if (llvm::Error error = emit("NOP"))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<PyObject*> Emitter::build(llvm::StringRef graphGlobal) {
  if (code_->co_flags & ResumableFlags)
    return fail("it is a generator or coroutine function, whose frames are resumed after they "
                "return; only plain functions can be replaced by a compiled graph");
  const ir::Node* output = graph_.output();
  if (!output || output->args().size() != 1 + output->sideEffects().size())
    return fail("the graph has no return value");

  // co_consts[0] is the docstring (or None), which functions made from the
  // code object take as __doc__.
  PyObject* original = code_->co_consts;
  PyObject* doc = PyTuple_GET_SIZE(original) > 0 && PyUnicode_Check(PyTuple_GET_ITEM(original, 0))
                      ? PyTuple_GET_ITEM(original, 0)
                      : Py_None;
  consts_.push_back(PyRef::borrow(doc));
  constIndex_[doc == Py_None ? std::string("None") : "s" + python::utf8Of(doc).value_or("")] = 0;

  if (llvm::Error error = emitPrologue())
    return error;
  bindSymbols();

  // The graph callable, then its inputs: tensors, then ints, each in graph
  // order, as the runtime passes them to the compiled function.
  if (llvm::Error error = emit("LOAD_GLOBAL", (nameIndex(graphGlobal) << 1) | 1))
    return error;
  std::vector<const ir::Node*> inputs;
  for (const ir::Node& input : graph_.inputs())
    if (input.type().isTensor())
      inputs.push_back(&input);
  for (const ir::Node& input : graph_.inputs()) {
    if (input.type().kind() == ir::Type::Kind::Int)
      inputs.push_back(&input);
    else if (!input.type().isTensor())
      return fail("input %" + input.name() + " has type " + input.type().str() +
                  "; a compiled graph takes only tensor and int inputs");
  }
  for (const ir::Node* input : inputs)
    if (llvm::Error error = loadInput(*input))
      return error;
  if (llvm::Error error = emit("PRECALL", uint32_t(inputs.size())))
    return error;
  if (llvm::Error error = emit("CALL", uint32_t(inputs.size())))
    return error;

  // The result tuple stays below the value being rebuilt, then goes.
  resultDepth_ = depth_;
  leaves_ = ir::outputLeaves(graph_);
  if (llvm::Error error = rebuild(output->returnValue()))
    return error;
  // Then the side effects, in the order the program made them, each
  // leaving the stack as it found it.
  for (auto [i, effect] : llvm::enumerate(output->sideEffects()))
    if (llvm::Error error = replaySideEffect(effect, output->args()[i + 1]))
      return error;
  // The data-dependent ints come last and are read where the value uses
  // them.
  size_t values = llvm::count_if(leaves_, [](const ir::ValueRef& leaf) {
    return leaf.node->type().kind() != ir::Type::Kind::Int;
  });
  if (nextLeaf_ != values)
    return fail("the graph's results do not match its return value");
  if (llvm::Error error = emit("SWAP", 2))
    return error;
  if (llvm::Error error = emit("POP_TOP"))
    return error;
  if (llvm::Error error = emit("RETURN_VALUE"))
    return error;

  bytecode::DecodedCode body;
  body.instructions = std::move(instructions_);
  body.firstLine = line_;
  llvm::Expected<bytecode::RawCode> raw = bytecode::encode(body, opcodes_, effects_);
  if (!raw)
    return fail("encoding the body: " + llvm::toString(raw.takeError()));

  PyRef consts = PyRef::steal(PyTuple_New(Py_ssize_t(consts_.size())));
  PyRef names = PyRef::steal(PyTuple_New(Py_ssize_t(names_.size())));
  if (!consts || !names)
    return python::takePythonError("allocating co_consts and co_names");
  for (size_t i = 0; i < consts_.size(); ++i)
    PyTuple_SET_ITEM(consts.get(), Py_ssize_t(i), PyRef(consts_[i]).release());
  for (size_t i = 0; i < names_.size(); ++i) {
    PyObject* name = PyUnicode_FromStringAndSize(names_[i].data(), Py_ssize_t(names_[i].size()));
    if (!name)
      return python::takePythonError("making co_names");
    // Names are interned, as the compiler's are.
    PyUnicode_InternInPlace(&name);
    PyTuple_SET_ITEM(names.get(), Py_ssize_t(i), name);
  }
  return bytecode::buildCodeObject(code_, *raw, consts.get(), names.get());
}

} // namespace

std::string graphGlobalName(const ir::Graph& graph, size_t index) {
  std::string name = "__dync_graph_" + std::to_string(index) + "_" + graph.name();
  for (char& c : name)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return name;
}

llvm::Expected<struct _object*> buildWholeFunctionCode(struct _object* originalCode,
                                                       const ir::Graph& graph,
                                                       llvm::StringRef graphGlobal) {
  if (!originalCode || !PyCode_Check(originalCode))
    return llvm::createStringError("cannot rewrite " + graph.name() + ": not a code object");
  llvm::Expected<OpcodeTable> opcodes = OpcodeTable::fromInterpreter();
  if (!opcodes)
    return opcodes.takeError();
  llvm::Expected<StackEffects> effects = StackEffects::create(*opcodes);
  if (!effects)
    return effects.takeError();
  Emitter emitter(reinterpret_cast<PyCodeObject*>(originalCode), graph, *opcodes, *effects);
  return emitter.build(graphGlobal);
}

llvm::Expected<std::vector<uint8_t>> rewriteWholeFunction(struct _object* originalCode,
                                                          const ir::Graph& graph,
                                                          llvm::StringRef graphGlobal) {
  llvm::Expected<PyObject*> code = buildWholeFunctionCode(originalCode, graph, graphGlobal);
  if (!code)
    return code.takeError();
  PyRef owned = PyRef::steal(*code);
  PyRef bytes = PyRef::steal(PyMarshal_WriteObjectToString(owned.get(), Py_MARSHAL_VERSION));
  if (!bytes)
    return python::takePythonError("marshalling the rewritten code of " + graph.name());
  const auto* data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(bytes.get()));
  return std::vector<uint8_t>(data, data + PyBytes_GET_SIZE(bytes.get()));
}

} // namespace dync::rewrite
