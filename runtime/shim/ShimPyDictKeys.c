/*
 * ShimPyDictKeys.c - dict entries named by keys that are not (only) str,
 * and by positions, for guards.
 *
 * A program's dict may be keyed by ints, bools, floats, None or tuples of
 * those (`{0: 2.0, 1: 3.0}`, `{(1, 'a'): ...}`). Guards name such an entry
 * by its key and pin the dict's keys in order, so these readers compare a
 * dict's keys with a key the artifact encodes (see dync_shim.h) in C: the
 * exact type first (1, 1.0 and True are three keys to a guard, though one
 * to a dict lookup), then the value. No key's __eq__ or __hash__ runs, and a
 * key of any other type compares unequal without being asked.
 */
#include "runtime/shim/dync_shim.h"

#include <Python.h>

#include <string.h>

/* The encoded key's tags. */
enum {
  TAG_INT = 'i',
  TAG_STR = 's',
  TAG_BOOL = 'b',
  TAG_FLOAT = 'f',
  TAG_NONE = 'n',
  TAG_TUPLE = 't'
};

/* Reads an int64 at *cursor, or fails past `end`. */
static int read_i64(const char** cursor, const char* end, int64_t* out) {
  if (end - *cursor < 8)
    return 0;
  memcpy(out, *cursor, 8);
  *cursor += 8;
  return 1;
}

/* Whether `obj` is the encoded key at *cursor: the same exact type and an
 * equal value, a tuple element by element. Always moves *cursor past the
 * encoded key (a NULL `obj` just skips it); -1 for a malformed encoding. */
static int key_matches(PyObject* obj, const char** cursor, const char* end, int depth) {
  if (*cursor >= end || depth > 32)
    return -1;
  char tag = *(*cursor)++;
  int64_t n;
  switch (tag) {
  case TAG_INT: {
    if (!read_i64(cursor, end, &n))
      return -1;
    return dync_py_equals_int(obj, n);
  }
  case TAG_STR: {
    if (!read_i64(cursor, end, &n) || n < 0 || end - *cursor < n)
      return -1;
    const char* bytes = *cursor;
    *cursor += n;
    if (!obj || !PyUnicode_CheckExact(obj))
      return 0;
    Py_ssize_t length;
    const char* data = PyUnicode_AsUTF8AndSize(obj, &length);
    if (!data) {
      PyErr_Clear();
      return 0;
    }
    return length == n && memcmp(data, bytes, (size_t)n) == 0;
  }
  case TAG_BOOL: {
    if (*cursor >= end)
      return -1;
    char value = *(*cursor)++;
    return obj && PyBool_Check(obj) && (obj == Py_True) == (value != 0);
  }
  case TAG_FLOAT: {
    double value;
    if (end - *cursor < 8)
      return -1;
    memcpy(&value, *cursor, 8);
    *cursor += 8;
    return dync_py_equals_float(obj, value);
  }
  case TAG_NONE:
    return obj == Py_None;
  case TAG_TUPLE: {
    if (!read_i64(cursor, end, &n) || n < 0)
      return -1;
    int same = obj && PyTuple_CheckExact(obj) && PyTuple_GET_SIZE(obj) == n;
    for (int64_t i = 0; i < n; ++i) {
      int element = key_matches(same ? PyTuple_GET_ITEM(obj, i) : NULL, cursor, end, depth + 1);
      if (element < 0)
        return -1;
      same = same && element;
    }
    return same;
  }
  default:
    return -1;
  }
}

/* Whether `obj` is exactly the one key encoded in the `size` bytes at `key`. */
static int is_key(PyObject* obj, const char* key, int64_t size) {
  const char* cursor = key;
  return key_matches(obj, &cursor, key + size, 0) == 1 && cursor == key + size;
}

PyObject* dync_py_dict_item_keyed(PyObject* dict, const char* key, int64_t size) {
  /* A dict subclass's items are its dict's own, as for dync_py_dict_item. */
  if (!dict || !key || size <= 0 || !PyDict_Check(dict))
    return NULL;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &k, &v))
    if (is_key(k, key, size))
      return v;
  return NULL;
}

int dync_py_dict_lacks_str(PyObject* dict, const char* key, int64_t size) {
  if (!dict || !key || size < 0 || !PyDict_Check(dict))
    return 0;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &k, &v)) {
    PyTypeObject* type = Py_TYPE(k);
    if (type == &PyUnicode_Type) {
      Py_ssize_t length = 0;
      const char* text = PyUnicode_AsUTF8AndSize(k, &length);
      if (!text) {
        PyErr_Clear();
        return 0;
      }
      if (length == size && memcmp(text, key, (size_t)size) == 0)
        return 0;
      continue;
    }
    if (type == &PyLong_Type || type == &PyBool_Type || type == &PyFloat_Type ||
        type == &PyBytes_Type || type == &PyTuple_Type || k == Py_None)
      continue;
    return 0;
  }
  return 1;
}

PyObject* dync_py_subscript_int(PyObject* obj, int64_t index) {
  if (!obj)
    return NULL;
  if (!PyDict_Check(obj))
    return dync_py_sequence_item(obj, index);
  char key[9] = {TAG_INT};
  memcpy(key + 1, &index, 8);
  return dync_py_dict_item_keyed(obj, key, sizeof key);
}

/* The keys of `obj` in iteration order as a new list: an OrderedDict's own
 * (its linked list), by its C iterator, so that no Python __iter__ of a
 * subclass runs; else the dict's storage order. NULL (no error set) when
 * they cannot be read so. */
static PyObject* keys_in_order(PyObject* obj) {
  PyObject* keys;
  if (PyODict_Check(obj)) {
    PyObject* iterator = PyODict_Type.tp_iter(obj);
    keys = iterator ? PySequence_List(iterator) : NULL;
    Py_XDECREF(iterator);
  } else {
    keys = PyDict_Keys(obj);
  }
  if (!keys)
    PyErr_Clear();
  return keys;
}

int dync_py_dict_keys_are_keyed(PyObject* obj, const char* keys, int64_t size, int64_t count) {
  if (!obj || !keys || size < 0 || !PyDict_Check(obj) || PyDict_GET_SIZE(obj) != count)
    return 0;
  const char* cursor = keys;
  const char* end = keys + size;
  int same = 1;
  if (PyODict_Check(obj)) {
    PyObject* list = keys_in_order(obj);
    if (!list)
      return 0;
    same = PyList_GET_SIZE(list) == count;
    for (Py_ssize_t i = 0; same && i < PyList_GET_SIZE(list); ++i)
      same = key_matches(PyList_GET_ITEM(list, i), &cursor, end, 0) == 1;
    Py_DECREF(list);
  } else {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (same && PyDict_Next(obj, &pos, &k, &v))
      same = key_matches(k, &cursor, end, 0) == 1;
  }
  return same && cursor == end;
}

PyObject* dync_py_dict_key_at(PyObject* dict, int64_t position) {
  /* Exact dicts and OrderedDicts only: their keys are the ones iterating
   * them gives. The key is borrowed from the dict, which holds it. */
  if (!dict || (!PyDict_CheckExact(dict) && !PyODict_CheckExact(dict)) || position < 0 ||
      position >= PyDict_GET_SIZE(dict))
    return NULL;
  PyObject* list = keys_in_order(dict);
  if (!list)
    return NULL;
  PyObject* key = position < PyList_GET_SIZE(list) ? PyList_GET_ITEM(list, position) : NULL;
  /* The list held the dict's own key objects; the dict keeps this one
   * alive after the list goes (no code runs in between). */
  Py_DECREF(list);
  return key;
}

/* Whether `obj` is a key whose equality and hash are C code with no user
 * hook: an exact int, bool, float, str or None, or an exact tuple of
 * those. */
static int is_plain_key(PyObject* obj, int depth) {
  if (obj == Py_None || PyBool_Check(obj) || PyLong_CheckExact(obj) || PyFloat_CheckExact(obj) ||
      PyUnicode_CheckExact(obj))
    return 1;
  if (!PyTuple_CheckExact(obj) || depth > 32)
    return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i)
    if (!is_plain_key(PyTuple_GET_ITEM(obj, i), depth + 1))
      return 0;
  return 1;
}

int dync_py_dict_has_key(PyObject* dict, PyObject* key) {
  /* Python's `key in dict`, computed only where no user code can take part:
   * both the key and every key of the dict plain. */
  if (!dict || !key || !PyDict_Check(dict) || !is_plain_key(key, 0))
    return -1;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  int found = 0;
  while (PyDict_Next(dict, &pos, &k, &v)) {
    if (!is_plain_key(k, 0))
      return -1;
    if (found)
      continue;
    int equal = PyObject_RichCompareBool(k, key, Py_EQ);
    if (equal < 0) {
      PyErr_Clear();
      return -1;
    }
    found = equal;
  }
  return found;
}
