//===- DictReads.h - The dictionary reads sources are made of -------------===//
//
// A source step must mean the same when the rewritten bytecode evaluates it
// (LOAD_ATTR, BINARY_SUBSCR) and when a native guard does without running
// Python code (ir/Source.h): `.name` is a key of the instance __dict__,
// `['key']` a str key of an exact dict, `[K]` another constant key
// (dictKeyOf). These functions give a value capture
// read its source only when the read was such a dictionary read and found
// that very object; otherwise they give null, and the value is a constant
// of the graph (its base's type is guarded instead).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Source.h"

#include <Python.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dync::capture {

/// `base.name`, when `getattr(object, name)` is Python's generic lookup (no
/// __getattribute__ override, no data descriptor on the type in front of the
/// instance dict) and found \p value in object's __dict__ (a module's or a
/// class's included). Null if \p base is.
ir::SourcePtr instanceDictSource(const ir::SourcePtr& base, PyObject* object, PyObject* name,
                                 PyObject* value);

/// `base._parameters['name']` (or `_buffers`, `_modules`, as \p table
/// says), when nn.Module \p module's table is an exact dict in its instance
/// __dict__ holding \p value under \p name.
ir::SourcePtr moduleTableSource(const ir::SourcePtr& base, PyObject* module, const char* table,
                                PyObject* name, PyObject* value);

/// `base.<table>` and the table itself (`_modules`, `_parameters` or
/// `_buffers`), when nn.Module \p module holds it as an exact dict in its
/// instance __dict__, read as instanceDictSource would; else nulls.
std::pair<ir::SourcePtr, PyObject*> moduleTable(const ir::SourcePtr& base, PyObject* module,
                                                const char* table);

/// The keys of exact dict \p dict in iteration order, when every one is an
/// exact str; else nothing.
std::optional<std::vector<std::string>> strKeys(PyObject* dict);

/// \p key as a constant a source names a dict entry by: an exact int (in
/// int64_t), str, bool, finite float or None, or an exact tuple of those;
/// else nothing (a NaN or infinity, an enum member, an object, a big int).
std::optional<ir::DictKey> dictKeyOf(PyObject* key);

/// The keys of exact dict \p dict in iteration order, when every one is a
/// dictKeyOf constant; else nothing.
std::optional<std::vector<ir::DictKey>> dictKeys(PyObject* dict);

/// Whether \p source names one of nn.Module's hook tables (a module's
/// `_forward_hooks`, `_forward_hooks_with_kwargs`, ..., or the global ones),
/// whose int keys are handle ids a process-wide counter numbers: guards
/// read them by position (ModuleHooks.cpp), never by key.
bool namesHookTable(const ir::Source& source);

/// The source of \p item, which the module container \p container (Sequential,
/// ModuleList, ModuleDict, ParameterList, ...) gave for \p key: the entry of
/// its `_modules`, `_parameters` or `_buffers` table holding that very
/// object, under the str key, or, for an int key, the entry at that position
/// (negative counts from the end), as the containers read them.
ir::SourcePtr containerItemSource(const ir::SourcePtr& base, PyObject* container, PyObject* key,
                                  PyObject* item);

} // namespace dync::capture
