//===- ModuleConstructors.h - Module classes capture may make for real ----===//
//
// `nn.Sequential(*layers)(x)`, `nn.Softmax(dim=-1)(x)`: a module class
// called in forward is made for real (Calls.cpp, constructModule), running
// its metaclass's __call__, __new__ and __init__ in the capturing process.
// For torch's own classes that is torch's code, which only sets up the new
// object (the modules passed in are referenced, not changed). A class of
// the program's (or another library's) could do anything there: change
// the modules it is given, a global, a counter, none of which the graph
// would do again on a call. So only classes whose construction runs
// torch's code alone are made for real.
//
// A class whose MRO writes an `__init__` of its own (transformers'
// `GELUActivation`, a program's `Block(dim)`) is not made for real that
// way: its `__init__` is followed symbolically (FreshModules.cpp). Only
// torch's own part runs for real: `object.__new__`, and the `__init__` of
// torch's classes that the program's calls through `super()`; what those
// may run of the class's own code is checked here first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

#include <optional>
#include <string>

namespace dync::capture {

/// Why making an object of the nn.Module class \p type for real would run
/// code that is not torch's: a metaclass other than `type`, or a class of
/// its MRO defined outside torch that writes `__init__` or `__new__`, a data
/// descriptor (a property, which torch's attribute assignments run), or a
/// method overriding one of its torch bases' or object's (which torch's
/// constructor may call: `add_module`, `__setattr__`, ...); `forward` is
/// exempt. nullopt when construction runs torch's code alone.
/// With \p initFollowed, an `__init__` outside torch is not a reason:
/// capture follows it, and only torch's constructors run for real.
std::optional<std::string> programCodeInConstructor(PyTypeObject* type, bool initFollowed = false);

/// Whether the `__init__` the MRO of \p type finds is a Python function
/// defined outside torch: one capture follows rather than runs.
bool hasProgramInit(PyTypeObject* type);

/// Whether \p function is defined in torch's package.
bool isTorchFunction(PyObject* function);

/// Why running torch's `nn.Module.__init__` for real on an object of
/// \p type would run code of the class's own: a data descriptor of a class
/// outside torch named as one of the attributes it sets (read from a plain
/// `nn.Module()`'s instance dict). nullopt when it would not.
std::optional<std::string> programCodeInModuleInit(PyTypeObject* type, PyObject* moduleClass);

} // namespace dync::capture
