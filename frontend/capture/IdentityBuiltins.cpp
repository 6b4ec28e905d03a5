//===- IdentityBuiltins.cpp - id(), vars() and globals() while capturing --===//
//
// Library code asks for an object's identity and its attribute dict in
// passing: inspect.unwrap memoises the wrappers it walks by `id(f)`, and a
// constructor fills its attributes with `vars(self).update(kwargs)`.
//
// id(x) is only meaningful against other ids of the same run: the number an
// object has when the artifact runs is not the one it had while capturing.
// So capture gives each identity (the real object, or the value capture
// models) its own number, of a private int subclass: comparisons, hashing
// and dict keys behave as the real ids do, arithmetic on one gives a plain
// int, and a function that returns one is refused, since the number itself
// is not what eager would return.
//
// vars(x) is `x.__dict__`, read as the attribute is; vars() without an
// argument (the caller's locals) is refused, and globals() too.
// sys.getrecursionlimit(), which inspect.unwrap bounds its walk with, reads
// the interpreter's limit.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CaptureObjects.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

/// The int subclass capture's identity numbers are made of
/// (capture_objects.py).
llvm::Expected<PyObject*> identityType() {
  static PyObject* type = nullptr; // alive as long as Python
  if (type)
    return type;
  llvm::Expected<PyRef> read = captureObject("CaptureIdentity");
  if (!read)
    return read.takeError();
  type = Py_NewRef(read->get());
  return type;
}

llvm::Expected<ValuePtr> builtinId(BuiltinContext& interp, const ValuePtr&, Args& args,
                                   KeywordArgs& kwargs) {
  if (args.size() != 1 || !kwargs.empty())
    return raiseBuiltin(PyExc_TypeError,
                        "id() takes exactly one argument (" + llvm::Twine(args.size()) + " given)");
  // A real object is itself; a value capture models (a list, an instance,
  // a function made while capturing) is the value, shared by identity.
  const void* identity = args[0]->realObject();
  if (!identity)
    identity = args[0].get();
  auto& [kept, number] = interp.identities()[identity];
  if (!number) {
    kept = args[0];
    llvm::Expected<PyObject*> type = identityType();
    if (!type)
      return type.takeError();
    // Spaced like addresses, so that none is a small int a program uses.
    size_t ordinal = interp.identities().size();
    PyRef value = PyRef::steal(PyLong_FromUnsignedLongLong((1ULL << 40) + 16 * ordinal));
    number = PyRef::steal(PyObject_CallOneArg(*type, value.get()));
    if (!number)
      return pythonError("making an identity number");
  }
  return makeConstant(number);
}

llvm::Expected<ValuePtr> builtinVars(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (!kwargs.empty() || args.size() > 1)
    return raiseBuiltin(PyExc_TypeError,
                        "vars expected at most 1 argument, got " + llvm::Twine(args.size()));
  if (args.empty())
    return captureError("vars() without an argument (the caller's local variables) is not "
                        "supported; pass the object whose attributes to read");
  return interp.getAttr(args[0], "__dict__");
}

/// globals(): refused in plain words. The dict is the module's namespace,
/// everything the module imported and defined: read whole, every entry
/// (and the builtins behind it) would have to be guarded, and read without
/// a source no entry would be. A table of the choices the program means
/// indexes as well.
llvm::Expected<ValuePtr> builtinGlobals(BuiltinContext&, const ValuePtr&, Args&, KeywordArgs&) {
  return captureError("globals() is not supported yet: it is the module's whole namespace, "
                      "which the compiled code cannot check entry by entry; keep the "
                      "functions to choose from in a dict at module level ({'name': function}) "
                      "and index that, or call the function by its name");
}

/// sys.getrecursionlimit(): how deep the interpreter lets calls go, which
/// code walking chains compares against (inspect.unwrap); read as it is.
llvm::Expected<ValuePtr> sysGetrecursionlimit(BuiltinContext&, const ValuePtr&, Args& args,
                                              KeywordArgs& kwargs) {
  if (!args.empty() || !kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "getrecursionlimit() takes no arguments");
  return makeInt(Py_GetRecursionLimit());
}

} // namespace

llvm::Error registerIdentityHandlers(BuiltinContext& interp) {
  const std::pair<const char*, BuiltinHandler> handlers[] = {
      {"builtins.id", builtinId},
      {"builtins.vars", builtinVars},
      {"builtins.globals", builtinGlobals},
      {"sys.getrecursionlimit", sysGetrecursionlimit},
  };
  for (const auto& [name, handler] : handlers) {
    llvm::Expected<PyRef> object = importObject(name);
    if (!object)
      return object.takeError();
    addBuiltin(interp, object->get(), handler);
  }
  return llvm::Error::success();
}

} // namespace dync::capture
