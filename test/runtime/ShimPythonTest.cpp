//===- ShimPythonTest.cpp - torch.Tensor objects <-> shim handles ---------===//
//
// Runs an embedded interpreter with torch imported, as the runtime's host
// process will have.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <Python.h>

#include <gtest/gtest.h>

namespace {

class ShimPythonTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized())
      Py_InitializeEx(0);
    torch = PyImport_ImportModule("torch");
    if (!torch)
      PyErr_Print();
  }

  // Evaluates a Python expression with torch in scope; a new reference.
  static PyObject* eval(const char* expr) {
    PyObject* globals = PyDict_New();
    PyDict_SetItemString(globals, "torch", torch);
    PyObject* result = PyRun_String(expr, Py_eval_input, globals, globals);
    Py_DECREF(globals);
    if (!result)
      PyErr_Print();
    return result;
  }

  static inline PyObject* torch = nullptr;
};

TEST_F(ShimPythonTest, UnwrapAndWrapRoundTrip) {
  ASSERT_NE(torch, nullptr);
  PyObject* obj = eval("torch.arange(6.0).reshape(2, 3)");
  ASSERT_NE(obj, nullptr);

  dync_tensor* handle = nullptr;
  ASSERT_EQ(dync_tensor_from_pyobject(obj, &handle), DYNC_OK) << dync_last_error();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(dync_tensor_dim(handle), 2);
  EXPECT_EQ(dync_tensor_sizes(handle)[1], 3);
  EXPECT_EQ(dync_tensor_dtype(handle), DYNC_DTYPE_FLOAT32);
  EXPECT_EQ(dync_tensor_borrow_from_pyobject(obj), handle);

  // Wrapping a tensor that already has a Python object gives that object.
  PyObject* again = dync_tensor_to_pyobject(handle);
  EXPECT_EQ(again, obj);
  Py_XDECREF(again);

  // A result computed through the shim becomes a fresh torch.Tensor.
  dync_op* relu = nullptr;
  ASSERT_EQ(dync_op_lookup("aten::neg", "default", &relu), DYNC_OK);
  dync_stack* stack = dync_stack_new();
  dync_stack_push_tensor(stack, handle);
  ASSERT_EQ(dync_op_call(relu, stack), DYNC_OK) << dync_last_error();
  dync_tensor* out = nullptr;
  ASSERT_EQ(dync_stack_take_tensor(stack, 0, &out), DYNC_OK);
  dync_stack_free(stack);
  PyObject* outObj = dync_tensor_to_pyobject(out);
  dync_tensor_release(out);
  ASSERT_NE(outObj, nullptr);
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "torch", torch);
  PyDict_SetItemString(globals, "x", obj);
  PyDict_SetItemString(globals, "y", outObj);
  PyObject* same = PyRun_String("isinstance(y, torch.Tensor) and torch.equal(y, -x)", Py_eval_input,
                                globals, globals);
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(same, Py_True);
  Py_XDECREF(same);
  Py_DECREF(globals);
  Py_DECREF(outObj);

  dync_tensor_release(handle);
  Py_DECREF(obj);
}

TEST_F(ShimPythonTest, ParameterIsATensor) {
  ASSERT_NE(torch, nullptr);
  PyObject* obj = eval("torch.nn.Parameter(torch.ones(4))");
  ASSERT_NE(obj, nullptr);
  EXPECT_NE(dync_tensor_borrow_from_pyobject(obj), nullptr);
  EXPECT_EQ(dync_tensor_requires_grad(dync_tensor_borrow_from_pyobject(obj)), 1);
  Py_DECREF(obj);
}

TEST_F(ShimPythonTest, NonTensorsAreRejected) {
  ASSERT_NE(torch, nullptr);
  PyObject* obj = eval("[1, 2, 3]");
  ASSERT_NE(obj, nullptr);
  dync_tensor* handle = reinterpret_cast<dync_tensor*>(0x1);
  EXPECT_EQ(dync_tensor_from_pyobject(obj, &handle), DYNC_ERR_PYTHON);
  EXPECT_EQ(handle, nullptr);
  EXPECT_STREQ(dync_last_error(), "expected a torch.Tensor, got list");
  EXPECT_EQ(dync_tensor_borrow_from_pyobject(obj), nullptr);
  EXPECT_EQ(dync_tensor_borrow_from_pyobject(nullptr), nullptr);
  EXPECT_FALSE(PyErr_Occurred());
  Py_DECREF(obj);

  EXPECT_EQ(dync_tensor_to_pyobject(nullptr), nullptr);
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_ValueError));
  PyErr_Clear();
}

TEST_F(ShimPythonTest, PythonTableFields) {
  dync_shim_api api{};
  dync_shim_fill_api(&api);
  dync_shim_fill_python_api(&api);
  EXPECT_EQ(api.tensor_from_pyobject, &dync_tensor_from_pyobject);
  EXPECT_EQ(api.tensor_borrow_from_pyobject, &dync_tensor_borrow_from_pyobject);
  EXPECT_EQ(api.tensor_to_pyobject, &dync_tensor_to_pyobject);
}

} // namespace
