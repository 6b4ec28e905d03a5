//===- PyRef.h - An owned reference to a Python object ---------------------===//
#pragma once

#include <Python.h>

#include <utility>

namespace dync::python {

/// Owns one strong reference; releases it on destruction. The GIL must be
/// held wherever a PyRef is created, copied or destroyed.
class PyRef {
public:
  PyRef() = default;
  /// Takes ownership of a new reference (may be null).
  static PyRef steal(PyObject* object) { return PyRef(object); }
  /// Adds a reference to a borrowed one.
  static PyRef borrow(PyObject* object) {
    Py_XINCREF(object);
    return PyRef(object);
  }

  PyRef(const PyRef& other) : object_(other.object_) { Py_XINCREF(object_); }
  PyRef(PyRef&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  PyRef& operator=(PyRef other) noexcept {
    std::swap(object_, other.object_);
    return *this;
  }
  ~PyRef() { Py_XDECREF(object_); }

  PyObject* get() const { return object_; }
  PyObject* release() { return std::exchange(object_, nullptr); }
  explicit operator bool() const { return object_ != nullptr; }

private:
  explicit PyRef(PyObject* object) : object_(object) {}
  PyObject* object_ = nullptr;
};

/// An exception taken out of the interpreter, normalized: the value is an
/// instance of the type.
struct FetchedException {
  PyRef type;
  PyRef value;
  PyRef traceback;
};

/// Takes the pending exception, leaving none set; all null when none was
/// pending. GIL held.
inline FetchedException fetchException() {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  return FetchedException{PyRef::steal(type), PyRef::steal(value), PyRef::steal(traceback)};
}

} // namespace dync::python
