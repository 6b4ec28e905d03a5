/*
 * ShimPyObjects.c - reading Python objects for guards without running
 * Python-level code.
 *
 * Guards run before every call of a compiled function, on objects the user
 * controls, so they must not reach anything the user could have overridden:
 * attribute lookup would run descriptors and __getattr__, a dict lookup may
 * compare the probe with a key's __eq__, and `isinstance` may run a
 * metaclass's __instancecheck__. These functions read what CPython stores
 * instead.
 *
 * Two of them need CPython 3.11's internal layouts, which is why this file
 * is C (the internal headers do not compile as C++) and kept apart:
 *  - whether a dict's keys are all exact str (the `dk_kind` of its keys),
 *    which makes a hashed lookup safe;
 *  - an instance's inline attribute values (3.11's managed dicts), read in
 *    place rather than through _PyObject_GetDictPtr, which would turn them
 *    into a dict as a side effect.
 */
#include "runtime/shim/dync_shim.h"

#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_object.h>

#include <math.h>
#include <string.h>
#include <structmember.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "the guard readers read CPython 3.11's dict and instance layouts"
#endif

/* Whether `key` is an exact str whose UTF-8 form is the `size` bytes at
 * `utf8`. Any other key compares unequal without being asked. */
static int str_equals(PyObject* key, const char* utf8, Py_ssize_t size) {
  if (!key || !PyUnicode_CheckExact(key))
    return 0;
  if (PyUnicode_IS_READY(key) && PyUnicode_IS_COMPACT_ASCII(key))
    return PyUnicode_GET_LENGTH(key) == size && memcmp(PyUnicode_DATA(key), utf8, size) == 0;
  Py_ssize_t length;
  /* Caches the UTF-8 form in the str; fails only for lone surrogates, which
   * no UTF-8 text equals. */
  const char* data = PyUnicode_AsUTF8AndSize(key, &length);
  if (!data) {
    PyErr_Clear();
    return 0;
  }
  return length == size && memcmp(data, utf8, size) == 0;
}

/* The str objects guards look keys up with, interned and with their hashes
 * computed, kept for the life of the process: a guard runs before every
 * call, and building and hashing a new str per lookup was a large part of
 * its cost. The keys are the few names in loaded artifacts' sources
 * (`_modules`, `weight`, ...); interned, they are usually the very objects
 * the dicts hold, so a lookup compares pointers. Entries are matched by
 * content, never by the caller's pointer, which may belong to an artifact
 * since unloaded. Touched only with the GIL held, as every reader here. */
enum { PROBE_SLOTS = 1024, PROBE_TRIES = 8 };
static PyObject* probe_cache[PROBE_SLOTS];

/* A new reference to a str equal to the `size` bytes at `key`, or NULL
 * (with no error set) if it cannot be made. */
static PyObject* probe_for(const char* key, Py_ssize_t size) {
  /* FNV-1a over the bytes picks the first slot to try. */
  uint64_t hash = 1469598103934665603ull;
  for (Py_ssize_t i = 0; i < size; ++i)
    hash = (hash ^ (unsigned char)key[i]) * 1099511628211ull;
  PyObject** free_slot = NULL;
  for (unsigned i = 0; i < PROBE_TRIES; ++i) {
    PyObject** slot = &probe_cache[(hash + i) & (PROBE_SLOTS - 1)];
    PyObject* cached = *slot;
    if (!cached) {
      free_slot = slot;
      break;
    }
    if (PyUnicode_GET_LENGTH(cached) == size && memcmp(PyUnicode_DATA(cached), key, size) == 0) {
      Py_INCREF(cached);
      return cached;
    }
  }
  PyObject* probe = PyUnicode_FromStringAndSize(key, size);
  if (!probe) {
    PyErr_Clear();
    return NULL;
  }
  /* Only ASCII keys are cached, so that comparing the bytes above compares
   * the text; a full table just makes a fresh probe each time. */
  if (free_slot && PyUnicode_IS_COMPACT_ASCII(probe)) {
    PyUnicode_InternInPlace(&probe);
    /* A str whose hash cannot be computed is never a dict's key. */
    if (PyObject_Hash(probe) == -1) {
      PyErr_Clear();
      Py_DECREF(probe);
      return NULL;
    }
    Py_INCREF(probe);
    *free_slot = probe;
  }
  return probe;
}

/* dict[key] for any dict object, comparing keys only as exact str. */
static PyObject* dict_lookup(PyObject* dict, const char* key) {
  Py_ssize_t size = (Py_ssize_t)strlen(key);
  if (DK_IS_UNICODE(((PyDictObject*)dict)->ma_keys)) {
    /* Every key is an exact str, so the hashed lookup compares str with
     * str in C and runs nothing else. */
    PyObject* probe = probe_for(key, size);
    if (!probe)
      return NULL;
    PyObject* value = PyDict_GetItemWithError(dict, probe);
    Py_DECREF(probe);
    if (!value && PyErr_Occurred())
      PyErr_Clear();
    return value;
  }
  /* Some key is not an exact str; a hashed lookup could call its __eq__
   * on a hash collision. Scan instead, skipping those keys. */
  Py_ssize_t pos = 0;
  PyObject* k;
  PyObject* v;
  while (PyDict_Next(dict, &pos, &k, &v))
    if (str_equals(k, key, size))
      return v;
  return NULL;
}

/* The instance-dict read of dync_py_instance_attr; sets *unknown when the
 * dict's layout cannot be read without running code, so that "no such key"
 * and "cannot tell" stay apart. */
static PyObject* instance_attr(PyObject* obj, const char* name, int* unknown) {
  *unknown = 0;
  PyTypeObject* type = Py_TYPE(obj);
  PyObject* dict;
  if (type->tp_flags & Py_TPFLAGS_MANAGED_DICT) {
    PyDictValues* values = *_PyObject_ValuesPointer(obj);
    if (values) {
      /* The attributes live in the instance, keyed by the class's shared
       * keys (all exact str, never removed; a deleted attribute has a NULL
       * value). */
      PyDictKeysObject* keys = ((PyHeapTypeObject*)type)->ht_cached_keys;
      if (!keys || keys->dk_kind == DICT_KEYS_GENERAL) {
        *unknown = 1;
        return NULL;
      }
      PyDictUnicodeEntry* entries = DK_UNICODE_ENTRIES(keys);
      Py_ssize_t size = (Py_ssize_t)strlen(name);
      for (Py_ssize_t i = 0; i < keys->dk_nentries; ++i)
        if (str_equals(entries[i].me_key, name, size))
          return values->values[i];
      return NULL;
    }
    dict = *_PyObject_ManagedDictPointer(obj);
  } else {
    /* Without a managed dict this only computes the slot's address from
     * tp_dictoffset; nothing is created. */
    PyObject** slot = _PyObject_GetDictPtr(obj);
    dict = slot ? *slot : NULL;
  }
  /* A dict subclass assigned to __dict__ is read as attribute lookup reads
   * it: as a dict, ignoring its methods. */
  if (!dict)
    return NULL;
  if (!PyDict_Check(dict)) {
    *unknown = 1;
    return NULL;
  }
  return dict_lookup(dict, name);
}

/* The function a wrapper of torch's compile machinery stands for, or `obj`
 * itself. torch rebinds some of its own functions on import
 * (`torch.manual_seed` when torch._dynamo is first imported, torch.jit's
 * tracers when torch.compile first runs) to wrappers that only keep
 * torch.compile from tracing into them: `torch._disable_dynamo`'s (defined
 * in torch._compile) and `torch._dynamo.disable`'s (marked
 * `_torchdynamo_disable`). An eager call runs the wrapped function as it
 * is, so whether the process imported torch._dynamo must not decide a
 * guard. A function decorated with torch.compile is torch._dynamo's
 * wrapper marked `_torchdynamo_orig_callable`, whose compiled code computes
 * what the wrapped function does; it is followed the same way. Capture
 * describes such a function by the one it wraps; a user's own replacement
 * is defined elsewhere and is not followed. Capture's unwrapDynamoDisabled
 * (frontend/capture/ValueBuilder.cpp) is the same test in the compiler, a
 * layer the runtime does not link; test/e2e/test_torch_compiled_calls.py
 * keeps the two in step (every call through a wrapper hits). */
static PyObject* unwrap_dynamo_disabled(PyObject* obj) {
  for (int depth = 0; depth < 4 && obj && Py_TYPE(obj) == &PyFunction_Type; ++depth) {
    PyFunctionObject* fn = (PyFunctionObject*)obj;
    if (!fn->func_dict || !PyDict_Check(fn->func_dict) || !fn->func_globals ||
        !PyDict_Check(fn->func_globals))
      return obj;
    PyObject* module = dict_lookup(fn->func_globals, "__name__");
    int compile_module = str_equals(module, "torch._compile", 14);
    int dynamo_module = module && PyUnicode_CheckExact(module) &&
                        PyUnicode_IS_COMPACT_ASCII(module) && PyUnicode_GET_LENGTH(module) > 14 &&
                        memcmp(PyUnicode_DATA(module), "torch._dynamo.", 14) == 0;
    if (!compile_module &&
        !(dynamo_module && (dict_lookup(fn->func_dict, "_torchdynamo_disable") == Py_True ||
                            dict_lookup(fn->func_dict, "_torchdynamo_orig_callable"))))
      return obj;
    PyObject* wrapped = dict_lookup(fn->func_dict, "__wrapped__");
    if (!wrapped)
      return obj;
    obj = wrapped;
  }
  return obj;
}

/* The attributes a guard reads from the C fields of a function, a bound
 * method or a property (whose types are exact, so no Python-level code can be behind
 * them): what capture read where the function's defaults filled parameters
 * and where a property's getter ran. NULL when `obj` is not such an object
 * or `name` not such a field; `*found` tells the two NULLs apart. */
static PyObject* builtin_field(PyObject* obj, const char* name, int* found) {
  *found = 0;
  if (Py_IS_TYPE(obj, &PyFunction_Type)) {
    if (strcmp(name, "__defaults__") == 0 || strcmp(name, "__kwdefaults__") == 0) {
      PyFunctionObject* fn = (PyFunctionObject*)unwrap_dynamo_disabled(obj);
      if (Py_TYPE(fn) != &PyFunction_Type)
        return NULL;
      *found = 1;
      PyObject* field = name[2] == 'd' ? fn->func_defaults : fn->func_kwdefaults;
      return field ? field : Py_None;
    }
  } else if (PyType_Check(obj) && strcmp(name, "__mro__") == 0) {
    /* The lookup order of a class: a tuple the type keeps, remade when its
     * bases are assigned. */
    *found = 1;
    return ((PyTypeObject*)obj)->tp_mro;
  } else if (Py_IS_TYPE(obj, &PyMethod_Type) &&
             (strcmp(name, "__self__") == 0 || strcmp(name, "__func__") == 0)) {
    /* A bound method's own fields (a hook registered as `obj.method`). */
    *found = 1;
    return name[2] == 's' ? PyMethod_GET_SELF(obj) : PyMethod_GET_FUNCTION(obj);
  } else if (Py_IS_TYPE(obj, &PyProperty_Type) && strcmp(name, "fget") == 0) {
    *found = 1;
    /* A member of the property's own struct: reading it runs no code, and
     * the property keeps the getter alive, so a borrowed result is safe. */
    PyObject* getter = PyObject_GetAttrString(obj, "fget");
    if (!getter) {
      PyErr_Clear();
      return NULL;
    }
    Py_DECREF(getter);
    return getter;
  }
  return NULL;
}

/* Whether some class in `type`'s MRO declares members a lookup could find:
 * a Python class with a non-empty `__slots__`, or a type written in C with
 * members (defaultdict's default_factory, functools.partial's func). Without one no attribute is a
 * member, and the lookup below is skipped (attribute guards run on every
 * call). */
static int has_members(PyTypeObject* type) {
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return 1;
  /* A class statement's members are its __slots__ (the array ends at once
   * without them); an extension's types list theirs. */
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    PyTypeObject* base = (PyTypeObject*)PyTuple_GET_ITEM(mro, i);
    if (base->tp_members && base->tp_members[0].name)
      return 1;
  }
  return 0;
}

/* The value held in the member `name` of `obj`: a `__slots__` member of a
 * Python class (a dataclass with slots=True, say), or a C member of a static
 * type read as the generic lookup reads it (defaultdict's default_factory).
 * The member descriptor found on the type gives the offset of the object's
 * own storage, read in place. Looking the name up on the type compares str
 * keys only (an interned probe, no allocation once cached), so no user code
 * runs. NULL when `name` is not such a member or the slot is empty; `*found`
 * tells the two NULLs apart. */
static PyObject* slot_member(PyObject* obj, const char* name, int* found) {
  *found = 0;
  PyTypeObject* type = Py_TYPE(obj);
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) && type->tp_getattro != PyObject_GenericGetAttr)
    return NULL;
  if (!has_members(type))
    return NULL;
  PyObject* key = probe_for(name, (Py_ssize_t)strlen(name));
  if (!key)
    return NULL;
  PyObject* descriptor = _PyType_Lookup(type, key);
  Py_DECREF(key);
  if (!descriptor || !Py_IS_TYPE(descriptor, &PyMemberDescr_Type))
    return NULL;
  PyMemberDef* member = ((PyMemberDescrObject*)descriptor)->d_member;
  if (member->type != T_OBJECT_EX && member->type != T_OBJECT)
    return NULL;
  *found = 1;
  PyObject* value = *(PyObject**)((char*)obj + member->offset);
  return value || member->type == T_OBJECT_EX ? value : Py_None;
}

/* `obj.__dict__` where the generic lookup gives the namespace itself: a
 * module's dict, or an instance's own dict through the `__dict__` slot its
 * class inherits (made from CPython 3.11's inline values first, as reading
 * `vars(obj)` in Python makes it). NULL for anything else, so that a guard
 * on it fails rather than reads what a class of its own would give. */
static PyObject* namespace_of(PyObject* obj) {
  if (PyModule_Check(obj))
    return PyModule_GetDict(obj);
  PyObject* key = probe_for("__dict__", 8);
  if (!key)
    return NULL;
  PyObject* descriptor = _PyType_Lookup(Py_TYPE(obj), key);
  Py_DECREF(key);
  if (!descriptor || !Py_IS_TYPE(descriptor, &PyGetSetDescr_Type))
    return NULL;
  PyObject** dict = _PyObject_GetDictPtr(obj);
  if (!dict) {
    PyErr_Clear();
    return NULL;
  }
  return *dict;
}

PyObject* dync_py_instance_attr(PyObject* obj, const char* name) {
  if (!obj || !name)
    return NULL;
  if (strcmp(name, "__dict__") == 0)
    return namespace_of(obj);
  int found;
  PyObject* field = builtin_field(obj, name, &found);
  if (found)
    return field;
  PyObject* slot = slot_member(obj, name, &found);
  if (found)
    return slot;
  int unknown;
  return instance_attr(obj, name, &unknown);
}

PyObject* dync_py_dict_item(PyObject* dict, const char* key) {
  /* A dict subclass's items are its dict's own: what `obj['key']` gives
   * while the class reads items as dict does and the key is present, which
   * capture guards (the keys) or refuses (a __getitem__ of its own that a
   * graph input would run). */
  if (!dict || !key || !PyDict_Check(dict))
    return NULL;
  return dict_lookup(dict, key);
}

/* The value at position `index` of an exact dict, in iteration order. */
static PyObject* dict_value_at(PyObject* dict, int64_t index) {
  if (index < 0 || index >= PyDict_GET_SIZE(dict))
    return NULL;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  for (int64_t i = 0; PyDict_Next(dict, &pos, &key, &value); ++i)
    if (i == index)
      return value;
  return NULL;
}

/* The value at position `index` of an exact OrderedDict, in its own order
 * (its linked list, which `move_to_end` changes): its C iterator walks the
 * keys, and the value is the dict's entry for that exact key object, found
 * by identity so that no key's __eq__ runs. */
static PyObject* odict_value_at(PyObject* odict, int64_t index) {
  if (index < 0 || index >= PyDict_GET_SIZE(odict))
    return NULL;
  PyObject* iterator = PyObject_GetIter(odict);
  if (!iterator) {
    PyErr_Clear();
    return NULL;
  }
  PyObject* found = NULL;
  PyObject* key;
  for (int64_t i = 0; (key = PyIter_Next(iterator)) != NULL; ++i) {
    if (i == index) {
      PyObject *k, *value;
      Py_ssize_t pos = 0;
      while (PyDict_Next(odict, &pos, &k, &value))
        if (k == key) {
          found = value;
          break;
        }
    }
    Py_DECREF(key);
    if (i >= index)
      break;
  }
  Py_DECREF(iterator);
  if (PyErr_Occurred())
    PyErr_Clear();
  return found;
}

/* A list, or an object of a list subclass whose length and items are
 * list's own (no __len__ or __getitem__ of its class): what len() and
 * `[i]` give is then the list's size and items. */
static int reads_as_list(PyObject* obj) {
  if (PyList_CheckExact(obj))
    return 1;
  if (!PyList_Check(obj))
    return 0;
  PyTypeObject* type = Py_TYPE(obj);
  if (!type->tp_as_sequence ||
      type->tp_as_sequence->sq_length != PyList_Type.tp_as_sequence->sq_length)
    return 0;
  /* list's __getitem__ is a method, so a subclass's mp_subscript slot is
   * the generic one even when it inherits it: look the method up. */
  static PyObject* name;
  if (!name && !(name = PyUnicode_InternFromString("__getitem__"))) {
    PyErr_Clear();
    return 0;
  }
  return _PyType_Lookup(type, name) == _PyType_Lookup(&PyList_Type, name);
}

/* A tuple, or an object of a tuple subclass (a named tuple) whose length
 * and items are tuple's own: what len() and `[i]` give is then the tuple's
 * size and items. */
static int reads_as_tuple(PyObject* obj) {
  if (PyTuple_CheckExact(obj))
    return 1;
  if (!PyTuple_Check(obj))
    return 0;
  PyTypeObject* type = Py_TYPE(obj);
  if (!type->tp_as_sequence ||
      type->tp_as_sequence->sq_length != PyTuple_Type.tp_as_sequence->sq_length)
    return 0;
  static PyObject* name;
  if (!name && !(name = PyUnicode_InternFromString("__getitem__"))) {
    PyErr_Clear();
    return 0;
  }
  return _PyType_Lookup(type, name) == _PyType_Lookup(&PyTuple_Type, name);
}

PyObject* dync_py_sequence_item(PyObject* seq, int64_t index) {
  if (!seq)
    return NULL;
  if (PyDict_CheckExact(seq))
    return dict_value_at(seq, index);
  if (PyODict_CheckExact(seq))
    return odict_value_at(seq, index);
  Py_ssize_t size;
  PyObject** items;
  if (reads_as_list(seq)) {
    size = PyList_GET_SIZE(seq);
    items = ((PyListObject*)seq)->ob_item;
  } else if (reads_as_tuple(seq)) {
    size = PyTuple_GET_SIZE(seq);
    items = ((PyTupleObject*)seq)->ob_item;
  } else {
    return NULL;
  }
  if (index < 0)
    index += size;
  if (index < 0 || index >= size)
    return NULL;
  return items[index];
}

/* Whether class `type` is named module:qualname (dync_py_type_is). */
static int class_named(PyTypeObject* type, const char* module, const char* qualname) {
  if (type->tp_flags & Py_TPFLAGS_HEAPTYPE) {
    /* What type.__qualname__ and type.__module__ return for a class. */
    PyHeapTypeObject* heap = (PyHeapTypeObject*)type;
    if (!str_equals(heap->ht_qualname, qualname, (Py_ssize_t)strlen(qualname)))
      return 0;
    PyObject* dict = type->tp_dict;
    if (!dict || !PyDict_Check(dict))
      return 0;
    return str_equals(dict_lookup(dict, "__module__"), module, (Py_ssize_t)strlen(module));
  }
  /* A static type's tp_name is "module.qualname", or just the name for
   * builtins. */
  const char* name = type->tp_name;
  const char* dot = strrchr(name, '.');
  if (!dot)
    return strcmp(module, "builtins") == 0 && strcmp(qualname, name) == 0;
  size_t moduleSize = (size_t)(dot - name);
  return strlen(module) == moduleSize && memcmp(module, name, moduleSize) == 0 &&
         strcmp(qualname, dot + 1) == 0;
}

int dync_py_type_is(PyObject* obj, const char* module, const char* qualname) {
  if (!obj || !module || !qualname)
    return 0;
  return class_named(Py_TYPE(obj), module, qualname);
}

int dync_py_class_is(PyObject* obj, const char* module, const char* qualname) {
  if (!obj || !module || !qualname || !PyType_Check(obj))
    return 0;
  return class_named((PyTypeObject*)obj, module, qualname);
}

int dync_py_is_none(PyObject* obj) { return obj == Py_None; }

int64_t dync_py_length(PyObject* obj) {
  if (!obj)
    return -1;
  if (reads_as_list(obj))
    return (int64_t)PyList_GET_SIZE(obj);
  if (reads_as_tuple(obj))
    return (int64_t)PyTuple_GET_SIZE(obj);
  /* An OrderedDict's entries are its dict's own (nn.Module's hook
   * tables). */
  if (PyDict_CheckExact(obj) || PyODict_CheckExact(obj))
    return (int64_t)PyDict_GET_SIZE(obj);
  return -1;
}

/* dync_py_dict_keys_are for an OrderedDict or an object of a subclass: its
 * own order (its linked list), walked by OrderedDict's C iterator, which
 * runs no Python `__iter__` of a subclass. */
static int odict_keys_are(PyObject* obj, const char* const* keys, const int64_t* sizes,
                          int64_t count) {
  PyObject* iterator = PyODict_Type.tp_iter(obj);
  if (!iterator) {
    PyErr_Clear();
    return 0;
  }
  int same = 1;
  int64_t i = 0;
  PyObject* key;
  while (same && (key = PyIter_Next(iterator)) != NULL) {
    same = i < count && str_equals(key, keys[i], (Py_ssize_t)sizes[i]);
    ++i;
    Py_DECREF(key);
  }
  Py_DECREF(iterator);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return same && i == count;
}

int dync_py_dict_keys_are(PyObject* obj, const char* const* keys, const int64_t* sizes,
                          int64_t count) {
  /* Subclasses included: their keys are the dict's own. */
  if (!obj || !PyDict_Check(obj) || PyDict_GET_SIZE(obj) != count)
    return 0;
  if (PyODict_Check(obj))
    return odict_keys_are(obj, keys, sizes, count);
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  for (int64_t i = 0; PyDict_Next(obj, &pos, &key, &value); ++i)
    if (!str_equals(key, keys[i], (Py_ssize_t)sizes[i]))
      return 0;
  return 1;
}

int dync_py_equals_bool(PyObject* obj, int value) {
  return obj && PyBool_Check(obj) && (obj == Py_True) == (value != 0);
}

int dync_py_equals_int(PyObject* obj, int64_t value) {
  /* Exact: True is an int subclass equal to 1, but code specialized on the
   * int 1 may not be right for it. */
  if (!obj || !PyLong_CheckExact(obj))
    return 0;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return !overflow && v == value;
}

int dync_py_equals_float(PyObject* obj, double value) {
  if (!obj || !PyFloat_CheckExact(obj))
    return 0;
  double v = PyFloat_AS_DOUBLE(obj);
  if (v != v || value != value)
    return v != v && value != value;
  return v == value && signbit(v) == signbit(value);
}

int dync_py_equals_str(PyObject* obj, const char* utf8, size_t size) {
  if (!utf8)
    return 0;
  return str_equals(obj, utf8, (Py_ssize_t)size);
}

int dync_py_equals_int_bytes(PyObject* obj, const unsigned char* bytes, size_t size) {
  if (!obj || !bytes || size == 0 || !PyLong_CheckExact(obj))
    return 0;
  /* An int's signed two's complement in a given number of bytes is unique,
   * and CPython writes it without running Python-level code; a number that
   * does not fit raises OverflowError, which is an unequal number. */
  unsigned char small[64];
  unsigned char* own = size <= sizeof small ? small : (unsigned char*)PyMem_Malloc(size);
  if (!own)
    return 0;
  int equal = 0;
  if (_PyLong_AsByteArray((PyLongObject*)obj, own, size, /*little_endian=*/1,
                          /*is_signed=*/1) == 0)
    equal = memcmp(own, bytes, size) == 0;
  else
    PyErr_Clear();
  if (own != small)
    PyMem_Free(own);
  return equal;
}

/* ---- A complete guard set ---------------------------------------------- */

PyObject* dync_py_module(const char* name) {
  if (!name)
    return NULL;
  /* The interpreter's modules dict; a lookup compares str keys only. */
  PyObject* modules = PyImport_GetModuleDict();
  if (!modules || !PyDict_Check(modules))
    return NULL;
  return dict_lookup(modules, name);
}

PyObject* dync_py_class_attr(PyObject* obj, const char* name) {
  if (!obj || !name)
    return NULL;
  /* type.__mro__ as CPython stores it: a tuple of classes, each with its
   * own dict. */
  PyObject* mro = Py_TYPE(obj)->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    PyObject* base = PyTuple_GET_ITEM(mro, i);
    PyObject* dict = PyType_Check(base) ? ((PyTypeObject*)base)->tp_dict : NULL;
    if (!dict || !PyDict_Check(dict))
      continue;
    PyObject* value = dict_lookup(dict, name);
    if (value)
      return value;
  }
  return NULL;
}

int dync_py_class_attr_absent(PyObject* obj, const char* name) {
  if (!obj || !name)
    return 0;
  PyObject* mro = Py_TYPE(obj)->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    PyObject* base = PyTuple_GET_ITEM(mro, i);
    PyObject* dict = PyType_Check(base) ? ((PyTypeObject*)base)->tp_dict : NULL;
    if (!dict || !PyDict_Check(dict))
      return 0;
    if (dict_lookup(dict, name))
      return 0;
  }
  return 1;
}

PyObject* dync_py_closure_cell(PyObject* fn, int64_t index) {
  fn = unwrap_dynamo_disabled(fn);
  if (!fn || !PyFunction_Check(fn) || Py_TYPE(fn) != &PyFunction_Type)
    return NULL;
  PyObject* closure = ((PyFunctionObject*)fn)->func_closure;
  if (!closure || !PyTuple_Check(closure) || index < 0 || index >= PyTuple_GET_SIZE(closure))
    return NULL;
  PyObject* cell = PyTuple_GET_ITEM(closure, index);
  return cell && PyCell_Check(cell) ? PyCell_GET(cell) : NULL;
}

int dync_py_is_empty_dict(PyObject* obj) {
  if (!obj)
    return 0;
  /* collections.OrderedDict is a dict subclass in C whose entries are the
   * dict's own; its truth is the dict's size. */
  if (!PyDict_CheckExact(obj) && !PyODict_CheckExact(obj))
    return 0;
  return PyDict_GET_SIZE(obj) == 0;
}

/* Whether `value`, found as `obj._compiled_call_impl`, is None or what
 * nn.Module.compile stores there: torch.compile of `obj._call_impl`, a
 * wrapper of torch._dynamo marked `_torchdynamo_orig_callable` around the
 * method bound to `obj` itself whose function is the one type(obj)'s MRO
 * gives for `_call_impl`. nn.Module's __call__ then runs that wrapper in
 * place of `obj._call_impl`, and the code dynamo compiles from it computes
 * what `_call_impl` computes, as torch.compile(module)'s wrapper and
 * compiled functions do (unwrap_dynamo_disabled). */
static int is_compiled_own_call(PyObject* obj, PyObject* value) {
  /* None, as the class's default, makes nn.Module's call run _call_impl. */
  if (value == Py_None)
    return 1;
  if (Py_TYPE(value) != &PyFunction_Type)
    return 0;
  PyFunctionObject* fn = (PyFunctionObject*)value;
  if (!fn->func_dict || !PyDict_Check(fn->func_dict) || !fn->func_globals ||
      !PyDict_Check(fn->func_globals))
    return 0;
  PyObject* module = dict_lookup(fn->func_globals, "__name__");
  if (!module || !PyUnicode_CheckExact(module) || !PyUnicode_IS_COMPACT_ASCII(module) ||
      PyUnicode_GET_LENGTH(module) <= 14 ||
      memcmp(PyUnicode_DATA(module), "torch._dynamo.", 14) != 0)
    return 0;
  PyObject* wrapped = dict_lookup(fn->func_dict, "_torchdynamo_orig_callable");
  if (!wrapped || !Py_IS_TYPE(wrapped, &PyMethod_Type) || PyMethod_GET_SELF(wrapped) != obj)
    return 0;
  PyObject* call_impl = dync_py_class_attr(obj, "_call_impl");
  return call_impl && PyMethod_GET_FUNCTION(wrapped) == call_impl;
}

int dync_py_instance_attr_absent(PyObject* obj, const char* name) {
  if (!obj || !name)
    return 0;
  int unknown;
  PyObject* value = instance_attr(obj, name, &unknown);
  /* A module compiled in place (module.compile()) is called as it was
   * before: its `_compiled_call_impl` stands for its own `_call_impl`. */
  if (value && strcmp(name, "_compiled_call_impl") == 0)
    return is_compiled_own_call(obj, value);
  return !value && !unknown;
}

int dync_py_function_is(PyObject* obj, const char* module, const char* qualname,
                        int64_t first_line) {
  obj = unwrap_dynamo_disabled(obj);
  if (!obj || !module || !qualname || Py_TYPE(obj) != &PyFunction_Type)
    return 0;
  PyFunctionObject* fn = (PyFunctionObject*)obj;
  PyCodeObject* code = (PyCodeObject*)fn->func_code;
  /* The first line is not compared: lines move when a comment is added
   * above the function, and that its code is still what capture ran is
   * the load-time code identity check's (docs/runtime.md). */
  (void)first_line;
  if (!code || !PyCode_Check(code))
    return 0;
  return str_equals(code->co_qualname, qualname, (Py_ssize_t)strlen(qualname)) &&
         str_equals(fn->func_module, module, (Py_ssize_t)strlen(module));
}

int dync_py_builtin_is(PyObject* obj, const char* module, const char* name) {
  if (!obj || !module || !name || Py_TYPE(obj) != &PyCFunction_Type)
    return 0;
  PyCFunctionObject* fn = (PyCFunctionObject*)obj;
  if (!fn->m_ml || !fn->m_ml->ml_name || strcmp(fn->m_ml->ml_name, name) != 0)
    return 0;
  return str_equals(fn->m_module, module, (Py_ssize_t)strlen(module));
}

int dync_py_int_value(PyObject* obj, int64_t* out) {
  /* Exact: a bool is an int, but code sized by an int is not written for
   * True; a subclass may override arithmetic. */
  if (!obj || !out || !PyLong_CheckExact(obj))
    return 0;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  if (overflow)
    return 0;
  *out = (int64_t)v;
  return 1;
}
