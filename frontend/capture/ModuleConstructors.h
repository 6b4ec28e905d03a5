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
std::optional<std::string> programCodeInConstructor(PyTypeObject* type);

} // namespace dync::capture
