//===- Module.cpp - The _dync extension module -----------------------------===//
//
// The native half of the Python package `dync`: opening artifacts through the
// loader, the graph callables the rewritten code calls, binding entries to
// the frame hook, and statistics. The package's __init__.py holds the parts
// that are plain Python: finding the module and function each entry
// replaces, and unmarshalling the rewritten code.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "runtime/artifact/Loader.h"
#include "runtime/package/FrameHook.h"
#include "runtime/shim/dync_shim.h"

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace dync::python;
using dync::runtime::LoadErrorKind;

namespace {

PyObject* ArtifactErrorType = nullptr;

// The shim table artifacts receive, with the Python functions guards need.
// Static: artifacts keep the pointer until they are unloaded.
const dync_shim_api* shimApi() {
  static dync_shim_api api = [] {
    dync_shim_api table{};
    dync_shim_fill_api(&table);
    dync_shim_fill_python_api(&table);
    return table;
  }();
  return &api;
}

PyObject* raiseArtifactError(const char* kind, const std::string& path,
                             const std::string& message) {
  return raiseWithAttributes(ArtifactErrorType, message, {"kind", kind},
                             {"path", path.c_str(), PyUnicode_DecodeFSDefault});
}

// Helpers that build dicts and steal the value's reference.
bool setItem(PyObject* dict, const char* key, PyObject* value) {
  if (!value)
    return false;
  int status = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return status == 0;
}

PyObject* str(const char* s) { return PyUnicode_FromString(s ? s : ""); }

//===----------------------------------------------------------------------===//
// Graph: one compiled graph as a Python callable.
//===----------------------------------------------------------------------===//

// An array of `n` value-initialized T, on the stack when n <= N: a graph
// call's argument and result arrays, which would otherwise be three heap
// allocations per call.
template <typename T, size_t N> class CallArray {
public:
  explicit CallArray(size_t n)
      : data_(n <= N ? local_ : (heap_ = std::make_unique<T[]>(n)).get()) {}
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

private:
  T local_[N] = {};
  std::unique_ptr<T[]> heap_;
  T* data_;
};

struct GraphObject {
  PyObject ob_base;
  vectorcallfunc vectorcall;
  std::shared_ptr<LoadedLibrary>* library;
  const dync_artifact_graph* graph;
};

void Graph_dealloc(PyObject* self) {
  auto* g = reinterpret_cast<GraphObject*>(self);
  delete g->library;
  Py_TYPE(self)->tp_free(self);
}

// A graph's run-time check failed: the program raises there. `text` is
// "Type" or "Type: message" with Type a builtin exception class, raised as
// `Type()` or `Type(message)`, as the program would; any other text is a
// RuntimeError carrying it.
PyObject* raiseCheckFailure(const char* text) {
  const char* separator = std::strstr(text, ": ");
  std::string typeName = separator ? std::string(text, separator - text) : std::string(text);
  PyObject* builtins = PyEval_GetBuiltins(); // borrowed
  PyObject* type = builtins ? PyDict_GetItemString(builtins, typeName.c_str()) : nullptr;
  if (!type || !PyExceptionClass_Check(type)) {
    PyErr_SetString(PyExc_RuntimeError, text);
    return nullptr;
  }
  PyObject* exception =
      separator ? PyObject_CallFunction(type, "s", separator + 2) : PyObject_CallNoArgs(type);
  if (exception) {
    PyErr_SetObject(type, exception);
    Py_DECREF(exception);
  }
  return nullptr;
}

// Graph(t0, ..., tN-1, i0, ..., iM-1) -> tuple of outputs: the tensor
// inputs, then the integer inputs, in the graph's order. Always a tuple, so
// the rewritten code unpacks every graph the same way; an undefined output
// tensor is None.
PyObject* Graph_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                           PyObject* kwnames) {
  auto* g = reinterpret_cast<GraphObject*>(self);
  const dync_artifact_graph& graph = *g->graph;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t expected = Py_ssize_t(graph.num_inputs) + graph.num_int_inputs;
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_Format(PyExc_TypeError, "dync graph %s takes no keyword arguments", graph.name);
    return nullptr;
  }
  if (nargs != expected) {
    PyErr_Format(PyExc_TypeError,
                 "dync graph %s takes %zd arguments (%u tensors, %u ints), got %zd", graph.name,
                 expected, graph.num_inputs, graph.num_int_inputs, nargs);
    return nullptr;
  }
  CallArray<dync_tensor*, 32> inputs(graph.num_inputs);
  for (uint32_t i = 0; i < graph.num_inputs; ++i) {
    // Borrowed: the argument objects outlive the call.
    inputs[i] = const_cast<dync_tensor*>(dync_tensor_borrow_from_pyobject(args[i]));
    if (!inputs[i]) {
      PyErr_Format(PyExc_TypeError,
                   "dync graph %s: argument %u must be a defined torch.Tensor, "
                   "not %s",
                   graph.name, i, Py_TYPE(args[i])->tp_name);
      return nullptr;
    }
  }
  CallArray<int64_t, 16> ints(graph.num_int_inputs);
  for (uint32_t i = 0; i < graph.num_int_inputs; ++i) {
    ints[i] = PyLong_AsLongLong(args[graph.num_inputs + i]);
    if (ints[i] == -1 && PyErr_Occurred())
      return nullptr;
  }
  CallArray<dync_tensor*, 16> outputs(graph.num_outputs);
  // Only the terminator: clearing the whole buffer on every call is work the
  // success path never reads.
  char error[1024];
  error[0] = 0;
  int status;
  // Kernels run without the GIL; the library stays loaded because this
  // object holds it.
  Py_BEGIN_ALLOW_THREADS;
  status = graph.run(inputs.data(), graph.num_inputs, ints.data(), graph.num_int_inputs,
                     outputs.data(), graph.num_outputs, error, sizeof(error));
  Py_END_ALLOW_THREADS;
  error[sizeof(error) - 1] = 0;
  if (status != DYNC_ARTIFACT_OK) {
    for (uint32_t i = 0; i < graph.num_outputs; ++i)
      dync_tensor_release(outputs[i]);
    if (status == DYNC_ARTIFACT_CHECK_FAILED)
      return raiseCheckFailure(error);
    if (status == DYNC_ARTIFACT_FALL_BACK) {
      PyErr_SetString(FallBackType, error);
      return nullptr;
    }
    PyErr_Format(PyExc_RuntimeError, "dync graph %s failed: %s", graph.name,
                 *error ? error : "no message");
    return nullptr;
  }
  PyObject* result = PyTuple_New(graph.num_outputs);
  for (uint32_t i = 0; i < graph.num_outputs; ++i) {
    PyObject* item = nullptr;
    if (result) {
      item = outputs[i] ? dync_tensor_to_pyobject(outputs[i]) : Py_NewRef(Py_None);
      if (item)
        PyTuple_SET_ITEM(result, i, item);
      else
        Py_CLEAR(result);
    }
    dync_tensor_release(outputs[i]);
  }
  return result;
}

PyObject* Graph_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "dync graphs take no keyword arguments");
    return nullptr;
  }
  return Graph_vectorcall(self, &PyTuple_GET_ITEM(args, 0), size_t(PyTuple_GET_SIZE(args)),
                          nullptr);
}

PyObject* Graph_repr(PyObject* self) {
  auto* g = reinterpret_cast<GraphObject*>(self);
  return PyUnicode_FromFormat("<dync graph %s: %u tensors, %u ints -> %u outputs>", g->graph->name,
                              g->graph->num_inputs, g->graph->num_int_inputs,
                              g->graph->num_outputs);
}

PyTypeObject GraphType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "_dync.Graph";
  t.tp_basicsize = sizeof(GraphObject);
  t.tp_dealloc = Graph_dealloc;
  t.tp_call = Graph_call;
  t.tp_repr = Graph_repr;
  t.tp_vectorcall_offset = offsetof(GraphObject, vectorcall);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = "A compiled graph of a loaded dync artifact.";
  return t;
}();

//===----------------------------------------------------------------------===//
// Artifact: one loaded library and the entries bound from it.
//===----------------------------------------------------------------------===//

struct ArtifactObject {
  PyObject ob_base;
  std::shared_ptr<LoadedLibrary>* library; // null once unloaded
  std::vector<std::shared_ptr<Binding>>* bindings;
  std::string* path;
};

ArtifactObject* asArtifact(PyObject* self) { return reinterpret_cast<ArtifactObject*>(self); }

// Removes the graph globals an entry bound, if they still hold its graphs.
// Leaves any exception already set as it was.
void unbindGlobals(Binding& b) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  for (auto& [name, graph] : b.boundGlobals) {
    PyObject* current = PyDict_GetItemWithError(b.globals, name);
    if (current == graph)
      PyDict_DelItem(b.globals, name);
    PyErr_Clear();
  }
  PyErr_Restore(type, value, traceback);
}

void unloadArtifact(ArtifactObject* a) {
  if (a->bindings) {
    for (auto& b : *a->bindings) {
      unregisterBinding(*b);
      unbindGlobals(*b);
    }
    a->bindings->clear();
  }
  if (a->library) {
    // The library closes once the last graph object lets go of it too.
    delete a->library;
    a->library = nullptr;
  }
}

void Artifact_dealloc(PyObject* self) {
  auto* a = asArtifact(self);
  unloadArtifact(a);
  delete a->bindings;
  delete a->path;
  Py_TYPE(self)->tp_free(self);
}

bool requireLoaded(ArtifactObject* a) {
  if (a->library)
    return true;
  raiseArtifactError("unloaded", *a->path, *a->path + ": the artifact has been unloaded");
  return false;
}

const dync_artifact_descriptor& descriptorOf(ArtifactObject* a) {
  return (*a->library)->artifact->descriptor();
}

// Code identity: an entry's "module", "defining_file" and "functions" (a
// list of {module, qualified_name, file, first_line, code_sha256}); None
// for each when the artifact records no origin.
bool addOrigin(PyObject* entry, const dync_artifact_entry_origin* origin) {
  if (!origin)
    return setItem(entry, "module", Py_NewRef(Py_None)) &&
           setItem(entry, "defining_file", Py_NewRef(Py_None)) &&
           setItem(entry, "functions", Py_NewRef(Py_None));
  PyObject* functions = PyList_New(0);
  bool ok = functions != nullptr;
  for (uint32_t f = 0; ok && f < origin->num_functions; ++f) {
    const dync_artifact_function& fn = origin->functions[f];
    PyObject* record =
        Py_BuildValue("{s:s,s:s,s:N,s:I,s:s}", "module", fn.module_name, "qualified_name",
                      fn.qualified_name, "file", PyUnicode_DecodeFSDefault(fn.file), "first_line",
                      fn.first_line, "code_sha256", fn.code_sha256);
    ok = record && PyList_Append(functions, record) == 0;
    Py_XDECREF(record);
  }
  if (!ok) {
    Py_XDECREF(functions);
    return false;
  }
  return setItem(entry, "module", str(origin->module_name)) &&
         setItem(entry, "defining_file", PyUnicode_DecodeFSDefault(origin->defining_file)) &&
         setItem(entry, "functions", functions);
}

PyObject* Artifact_manifest(PyObject* self, PyObject*) {
  auto* a = asArtifact(self);
  if (!requireLoaded(a))
    return nullptr;
  const dync_artifact_descriptor& d = descriptorOf(a);
  PyObject* m = PyDict_New();
  if (!m)
    return nullptr;
  PyObject* entries = nullptr;
  bool ok = setItem(m, "path", PyUnicode_DecodeFSDefault(a->path->c_str())) &&
            setItem(m, "format_version", PyLong_FromUnsignedLong(d.format_version)) &&
            setItem(m, "shim_abi_version", PyLong_FromUnsignedLong(d.shim_abi_version)) &&
            setItem(m, "python_magic",
                    PyBytes_FromStringAndSize(reinterpret_cast<const char*>(d.python_magic), 4)) &&
            setItem(m, "python", str(dync::runtime::describePythonMagic(d.python_magic).c_str())) &&
            setItem(m, "torch_version", str(d.torch_version)) &&
            setItem(m, "target_cpu", str(d.target_cpu)) &&
            setItem(m, "cpu_features", str(d.cpu_features)) &&
            setItem(m, "source_path", PyUnicode_DecodeFSDefault(d.source_path)) &&
            setItem(m, "source_sha256", str(d.source_sha256)) &&
            (entries = PyList_New(0)) != nullptr;
  for (uint32_t i = 0; ok && i < d.num_entries; ++i) {
    const dync_artifact_entry& e = d.entries[i];
    PyObject* entry = PyDict_New();
    PyObject* graphs = entry ? PyList_New(0) : nullptr;
    ok = graphs && setItem(entry, "qualified_name", str(e.qualified_name)) &&
         setItem(entry, "first_line", PyLong_FromUnsignedLong(e.first_line)) &&
         setItem(entry, "code_size", PyLong_FromSize_t(e.code_size)) &&
         addOrigin(entry, d.entry_origins ? &d.entry_origins[i] : nullptr);
    for (uint32_t g = 0; ok && g < e.num_graphs; ++g) {
      const dync_artifact_graph& graph = e.graphs[g];
      PyObject* gd =
          Py_BuildValue("{s:s,s:I,s:I,s:I}", "name", graph.name, "num_inputs", graph.num_inputs,
                        "num_int_inputs", graph.num_int_inputs, "num_outputs", graph.num_outputs);
      ok = gd && PyList_Append(graphs, gd) == 0;
      Py_XDECREF(gd);
    }
    if (ok) {
      ok = PyDict_SetItemString(entry, "graphs", graphs) == 0 && PyList_Append(entries, entry) == 0;
    }
    Py_XDECREF(graphs);
    Py_XDECREF(entry);
  }
  if (ok)
    ok = setItem(m, "entries", Py_NewRef(entries));
  Py_XDECREF(entries);
  if (!ok) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}

PyObject* Artifact_warnings(PyObject* self, PyObject*) {
  auto* a = asArtifact(self);
  if (!requireLoaded(a))
    return nullptr;
  const std::vector<std::string>& warnings = (*a->library)->artifact->warnings();
  PyObject* list = PyList_New(0);
  for (const std::string& w : warnings) {
    PyObject* s = list ? str(w.c_str()) : nullptr;
    if (!s || PyList_Append(list, s) != 0) {
      Py_XDECREF(s);
      Py_XDECREF(list);
      return nullptr;
    }
    Py_DECREF(s);
  }
  return list;
}

bool entryIndex(ArtifactObject* a, PyObject* arg, uint32_t& index) {
  unsigned long i = PyLong_AsUnsignedLong(arg);
  if (PyErr_Occurred())
    return false;
  if (i >= descriptorOf(a).num_entries) {
    PyErr_Format(PyExc_IndexError, "entry index %lu out of range", i);
    return false;
  }
  index = static_cast<uint32_t>(i);
  return true;
}

PyObject* Artifact_entry_code(PyObject* self, PyObject* arg) {
  auto* a = asArtifact(self);
  uint32_t i;
  if (!requireLoaded(a) || !entryIndex(a, arg, i))
    return nullptr;
  const dync_artifact_entry& e = descriptorOf(a).entries[i];
  return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(e.code),
                                   static_cast<Py_ssize_t>(e.code_size));
}

// Binds `function` for its entry `e` without serving it: see Artifact_bind.
PyObject* bindStale(ArtifactObject* a, const dync_artifact_entry& e, PyObject* function, int strict,
                    const char* reason) {
  auto b = std::make_shared<Binding>();
  b->library = *a->library;
  b->artifactPath = *a->path;
  b->qualifiedName = e.qualified_name;
  b->originalCode = Py_NewRef(PyFunction_GetCode(function));
  b->function = Py_NewRef(function);
  b->globals = Py_NewRef(PyFunction_GetGlobals(function));
  b->strict = strict;
  b->staleReason = reason;
  const char* kind = "";
  std::string error;
  if (!registerBinding(b, kind, error))
    return raiseArtifactError(kind, *a->path, *a->path + ": " + error);
  a->bindings->push_back(std::move(b));
  Py_RETURN_NONE;
}

// bind(indices, function, rewritten_codes, strict, stale_reason=None):
// serves calls of `function` with the entries `indices`, the function's
// variants in the order their guards are tried, entry indices[i] running
// rewritten_codes[i] on a hit. The caller (dync.load) has resolved the
// function and checked each code's signature. With a stale_reason (code
// capture ran has changed since), the function is bound only to be
// counted: every call runs the original code and is a miss for that
// reason; rewritten_codes is then None and no graph is bound.
PyObject* Artifact_bind(PyObject* self, PyObject* args) {
  auto* a = asArtifact(self);
  PyObject *indices, *function, *codes;
  int strict;
  const char* staleReason = nullptr;
  if (!PyArg_ParseTuple(args, "O!O!Op|z", &PyTuple_Type, &indices, &PyFunction_Type, &function,
                        &codes, &strict, &staleReason))
    return nullptr;
  if (!requireLoaded(a))
    return nullptr;
  Py_ssize_t count = PyTuple_GET_SIZE(indices);
  if (count == 0) {
    PyErr_SetString(PyExc_ValueError, "bind() needs at least one entry index");
    return nullptr;
  }
  if (staleReason) {
    uint32_t index;
    if (!entryIndex(a, PyTuple_GET_ITEM(indices, 0), index))
      return nullptr;
    return bindStale(a, descriptorOf(a).entries[index], function, strict, staleReason);
  }
  if (!PyTuple_Check(codes) || PyTuple_GET_SIZE(codes) != count) {
    PyErr_SetString(PyExc_ValueError, "bind() needs one rewritten code object per entry index");
    return nullptr;
  }

  auto b = std::make_shared<Binding>();
  b->library = *a->library;
  b->artifactPath = *a->path;
  b->originalCode = Py_NewRef(PyFunction_GetCode(function));
  b->function = Py_NewRef(function);
  b->globals = Py_NewRef(PyFunction_GetGlobals(function));
  b->strict = strict;
  PyObject* closure = PyFunction_GetClosure(function);
  PyObject* defaults = PyFunction_GetDefaults(function);
  PyObject* kwdefaults = PyFunction_GetKwDefaults(function);

  for (Py_ssize_t v = 0; v < count; ++v) {
    uint32_t index;
    PyObject* rewritten = PyTuple_GET_ITEM(codes, v);
    if (!entryIndex(a, PyTuple_GET_ITEM(indices, v), index))
      return nullptr;
    if (!PyCode_Check(rewritten)) {
      PyErr_SetString(PyExc_TypeError, "bind() takes code objects");
      return nullptr;
    }
    const dync_artifact_entry& e = descriptorOf(a).entries[index];
    if (v == 0)
      b->qualifiedName = e.qualified_name;
    PyObject* fn = PyFunction_NewWithQualName(
        rewritten, b->globals, reinterpret_cast<PyFunctionObject*>(function)->func_qualname);
    if (!fn)
      return nullptr;
    b->variants.push_back({&e, fn});
    if ((closure && PyFunction_SetClosure(fn, closure) != 0) ||
        (defaults && PyFunction_SetDefaults(fn, defaults) != 0) ||
        (kwdefaults && PyFunction_SetKwDefaults(fn, kwdefaults) != 0))
      return nullptr;

    // The graphs' names must be free in the module: never overwrite a
    // user's global or another artifact's graph.
    for (uint32_t g = 0; g < e.num_graphs; ++g) {
      PyObject* name = PyUnicode_FromString(e.graphs[g].name);
      if (!name)
        return nullptr;
      PyObject* graph = nullptr;
      auto* obj = PyObject_New(GraphObject, &GraphType);
      if (obj) {
        obj->vectorcall = Graph_vectorcall;
        obj->library = new std::shared_ptr<LoadedLibrary>(*a->library);
        obj->graph = &e.graphs[g];
        graph = reinterpret_cast<PyObject*>(obj);
      }
      if (!graph) {
        Py_DECREF(name);
        return nullptr;
      }
      b->boundGlobals.emplace_back(name, graph);
      int present = PyDict_Contains(b->globals, name);
      if (present < 0)
        return nullptr;
      if (present)
        return raiseArtifactError("global-in-use", *a->path,
                                  *a->path + ": " + b->qualifiedName +
                                      " calls its graph through the "
                                      "global " +
                                      e.graphs[g].name + ", which its module already defines");
    }
  }

  const char* kind = "";
  std::string error;
  if (!registerBinding(b, kind, error))
    return raiseArtifactError(kind, *a->path, *a->path + ": " + error);
  for (auto& [name, graph] : b->boundGlobals)
    if (PyDict_SetItem(b->globals, name, graph) != 0) {
      unregisterBinding(*b);
      unbindGlobals(*b);
      return nullptr;
    }
  a->bindings->push_back(std::move(b));
  Py_RETURN_NONE;
}

PyObject* Artifact_unload(PyObject* self, PyObject*) {
  unloadArtifact(asArtifact(self));
  Py_RETURN_NONE;
}

PyObject* statsDict(const EntryStats& s) {
  PyObject* reasons = PyDict_New();
  if (!reasons)
    return nullptr;
  for (const auto& [reason, count] : s.missReasons)
    if (!setItem(reasons, reason.c_str(), PyLong_FromUnsignedLongLong(count))) {
      Py_DECREF(reasons);
      return nullptr;
    }
  PyObject* last = s.misses ? str(s.lastMissReason.c_str()) : Py_NewRef(Py_None);
  return Py_BuildValue("{s:K,s:K,s:K,s:N,s:N}", "calls", (unsigned long long)s.calls, "hits",
                       (unsigned long long)s.hits, "misses", (unsigned long long)s.misses,
                       "last_miss_reason", last, "miss_reasons", reasons);
}

// {qualified_name: stats} for `bindings`, added to `into`.
bool addStats(PyObject* into, const std::vector<std::shared_ptr<Binding>>& bindings) {
  for (const auto& b : bindings)
    if (!setItem(into, b->qualifiedName.c_str(), statsDict(b->stats)))
      return false;
  return true;
}

PyObject* Artifact_stats(PyObject* self, PyObject*) {
  auto* a = asArtifact(self);
  PyObject* result = PyDict_New();
  if (result && !addStats(result, *a->bindings))
    Py_CLEAR(result);
  return result;
}

PyObject* Artifact_get_loaded(PyObject* self, void*) {
  return PyBool_FromLong(asArtifact(self)->library != nullptr);
}

PyObject* Artifact_get_path(PyObject* self, void*) {
  return PyUnicode_DecodeFSDefault(asArtifact(self)->path->c_str());
}

PyMethodDef ArtifactMethods[] = {
    {"manifest", Artifact_manifest, METH_NOARGS, "The descriptor as a dict."},
    {"warnings", Artifact_warnings, METH_NOARGS, "The loader's warnings."},
    {"entry_code", Artifact_entry_code, METH_O, "The marshalled rewritten code of an entry."},
    {"bind", Artifact_bind, METH_VARARGS,
     "bind(indices, function, codes, strict, stale_reason=None)"},
    {"unload", Artifact_unload, METH_NOARGS, "Unbinds every entry and releases the library."},
    {"stats", Artifact_stats, METH_NOARGS, "{qualified_name: stats} of the bound entries."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef ArtifactGetSet[] = {{"loaded", Artifact_get_loaded, nullptr, nullptr, nullptr},
                                {"path", Artifact_get_path, nullptr, nullptr, nullptr},
                                {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject ArtifactType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "_dync.Artifact";
  t.tp_basicsize = sizeof(ArtifactObject);
  t.tp_dealloc = Artifact_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "A loaded dync artifact (native half; see dync.Artifact).";
  t.tp_methods = ArtifactMethods;
  t.tp_getset = ArtifactGetSet;
  return t;
}();

//===----------------------------------------------------------------------===//
// Module functions
//===----------------------------------------------------------------------===//

// open(path, python_magic, torch_version) -> Artifact: the loader and all of
// its checks; every failure is an ArtifactError whose `kind` is the loader's
// name for it ("python-mismatch", "truncated", ...).
PyObject* dync_open(PyObject*, PyObject* args) {
  PyObject* pathObj;
  const char* magic;
  Py_ssize_t magicSize;
  const char* torchVersion;
  if (!PyArg_ParseTuple(args, "O&y#s", PyUnicode_FSConverter, &pathObj, &magic, &magicSize,
                        &torchVersion))
    return nullptr;
  std::string path = PyBytes_AS_STRING(pathObj);
  Py_DECREF(pathObj);
  if (magicSize != 4) {
    PyErr_SetString(PyExc_ValueError, "python_magic must be 4 bytes");
    return nullptr;
  }
  dync::runtime::LoadOptions options;
  options.pythonMagic = std::array<unsigned char, 4>{};
  std::memcpy(options.pythonMagic->data(), magic, 4);
  options.torchVersion = torchVersion;
  options.api = shimApi();
  // dync.load checks each function's code identity instead of the file's
  // hash: an edit elsewhere in the file leaves the entries served.
  options.warnOnSourceChange = false;

  dync::runtime::LoadResult result;
  // File checks, dlopen and the artifact's init run no Python code.
  Py_BEGIN_ALLOW_THREADS;
  result = dync::runtime::loadArtifact(path, options);
  Py_END_ALLOW_THREADS;
  if (!result)
    return raiseArtifactError(dync::runtime::loadErrorKindName(result.error), path, result.message);

  auto* a = PyObject_New(ArtifactObject, &ArtifactType);
  if (!a)
    return nullptr;
  a->library = new std::shared_ptr<LoadedLibrary>(std::make_shared<LoadedLibrary>());
  (*a->library)->artifact = std::move(result.artifact);
  a->bindings = new std::vector<std::shared_ptr<Binding>>();
  a->path = new std::string(path);
  return reinterpret_cast<PyObject*>(a);
}

// {artifact_path: {qualified_name: stats}} over every bound entry.
PyObject* dync_stats(PyObject*, PyObject*) {
  PyObject* result = PyDict_New();
  if (!result)
    return nullptr;
  for (const auto& b : registeredBindings()) {
    PyObject* perArtifact = PyDict_GetItemString(result, b->artifactPath.c_str());
    if (!perArtifact) {
      if (!setItem(result, b->artifactPath.c_str(), PyDict_New())) {
        Py_DECREF(result);
        return nullptr;
      }
      perArtifact = PyDict_GetItemString(result, b->artifactPath.c_str());
    }
    if (!addStats(perArtifact, {b})) {
      Py_DECREF(result);
      return nullptr;
    }
  }
  return result;
}

PyObject* dync_reset_stats(PyObject*, PyObject*) {
  for (const auto& b : registeredBindings())
    b->stats = EntryStats();
  Py_RETURN_NONE;
}

PyObject* dync_hook_installed(PyObject*, PyObject*) { return PyBool_FromLong(hookInstalled()); }

PyMethodDef ModuleMethods[] = {
    {"open", dync_open, METH_VARARGS, "open(path, python_magic, torch_version) -> Artifact"},
    {"stats", dync_stats, METH_NOARGS, "{artifact_path: {qualified_name: stats}}"},
    {"reset_stats", dync_reset_stats, METH_NOARGS, "Zeroes every entry's statistics."},
    {"hook_installed", dync_hook_installed, METH_NOARGS,
     "Whether dync's frame hook is the interpreter's frame evaluator."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef ModuleDef = {PyModuleDef_HEAD_INIT, "_dync", "dync's native runtime.", -1,
                         ModuleMethods};

bool addType(PyObject* module, const char* name, PyTypeObject* type) {
  return PyType_Ready(type) == 0 && PyModule_AddObjectRef(module, name, (PyObject*)type) == 0;
}

bool addException(PyObject* module, const char* name, const char* qualified, const char* doc,
                  PyObject* base, PyObject*& out) {
  out = PyErr_NewExceptionWithDoc(qualified, doc, base, nullptr);
  return out && PyModule_AddObjectRef(module, name, out) == 0;
}

} // namespace

PyMODINIT_FUNC PyInit__dync() {
  PyObject* module = PyModule_Create(&ModuleDef);
  if (!module)
    return nullptr;
  if (!addType(module, "Artifact", &ArtifactType) || !addType(module, "Graph", &GraphType) ||
      !addException(module, "ArtifactError", "dync.ArtifactError",
                    "An artifact cannot be loaded in this process; `kind` names the check that "
                    "failed and `path` the file.",
                    PyExc_RuntimeError, ArtifactErrorType) ||
      !addException(module, "GuardError", "dync.GuardError",
                    "A guard missed in strict mode; `entry` names the function and `reason` the "
                    "first failing guard.",
                    PyExc_RuntimeError, GuardErrorType) ||
      !addException(module, "FallBack", "dync.FallBack",
                    "A graph found, before doing anything observable, that a bound capture "
                    "inferred does not hold; the frame hook runs the original code instead. "
                    "Raised to the caller only when a graph is called directly.",
                    PyExc_RuntimeError, FallBackType) ||
      PyModule_AddStringConstant(module, "TORCH_VERSION_BUILT", dync_shim_torch_version()) != 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
