//===- TensorMetaSchemaTest.cpp - TensorMeta's fields, declared once ------===//
//
// The oracle's Python half declares TensorMeta's fields in TensorMeta.FIELDS;
// the C++ half finds each by name at start-up. The embedded oracle's
// declaration is read as it is, and a declaration the C++ side cannot read
// (a field renamed, repeated, missing or unknown) is an error naming it.
//
//===----------------------------------------------------------------------===//
#include "frontend/oracle/TensorMetaSchema.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/oracle/EmbeddedModules.h"
#include "test/unit/PythonTestSupport.h"

#include <initializer_list>
#include <string>

using dync::python::PyRef;
using namespace dync;

namespace {

/// A tuple of \p names.
PyRef tupleOf(std::initializer_list<const char*> names) {
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(names.size())));
  Py_ssize_t i = 0;
  for (const char* name : names)
    PyTuple_SET_ITEM(tuple.get(), i++, PyUnicode_FromString(name));
  return tuple;
}

TEST(TensorMetaSchemaTest, EmbeddedOracleDeclarationIsRead) {
  llvm::Expected<PyRef> module = oracle::importEmbeddedModule("dync_oracle");
  ASSERT_SUCCEEDED(module);
  PyRef metaClass = PyRef::steal(PyObject_GetAttrString(module->get(), "TensorMeta"));
  ASSERT_TRUE(metaClass);
  PyRef fields = PyRef::steal(PyObject_GetAttrString(metaClass.get(), "FIELDS"));
  ASSERT_TRUE(fields);
  llvm::Expected<oracle::TensorMetaSchema> schema = oracle::readTensorMetaSchema(fields.get());
  ASSERT_SUCCEEDED(schema);
  EXPECT_EQ(schema->size, PyTuple_GET_SIZE(fields.get()));

  // A TensorMeta the Python half builds by name has each value where the
  // schema says.
  PyRef of = PyRef::steal(PyObject_GetAttrString(metaClass.get(), "of"));
  ASSERT_TRUE(of);
  PyRef kwargs = PyRef::steal(Py_BuildValue("{s:i,s:s,s:(ii),s:(ii),s:s,s:O,s:O}", "id", 7, "dtype",
                                            "f32", "sizes", 2, 3, "strides", 3, 1, "device", "cpu",
                                            "requires_grad", Py_True, "sparse", Py_None));
  PyRef args = PyRef::steal(PyTuple_New(0));
  PyRef meta = PyRef::steal(PyObject_Call(of.get(), args.get(), kwargs.get()));
  ASSERT_TRUE(meta) << "TensorMeta.of failed";
  EXPECT_EQ(PyLong_AsLong(PyTuple_GET_ITEM(meta.get(), schema->id)), 7);
  EXPECT_EQ(python::utf8Of(PyTuple_GET_ITEM(meta.get(), schema->dtype)), "f32");
  EXPECT_EQ(PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(meta.get(), schema->sizes), 1)), 3);
  EXPECT_EQ(PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(meta.get(), schema->strides), 0)), 3);
  EXPECT_EQ(python::utf8Of(PyTuple_GET_ITEM(meta.get(), schema->device)), "cpu");
  EXPECT_EQ(PyTuple_GET_ITEM(meta.get(), schema->requiresGrad), Py_True);
  EXPECT_EQ(PyTuple_GET_ITEM(meta.get(), schema->sparse), Py_None);

  // Building one with a field the declaration lacks is refused.
  PyRef wrong = PyRef::steal(Py_BuildValue("{s:i}", "shape", 1));
  PyRef refused = PyRef::steal(PyObject_Call(of.get(), args.get(), wrong.get()));
  EXPECT_FALSE(refused);
  PyErr_Clear();
}

TEST(TensorMetaSchemaTest, AnyOrderIsReadByName) {
  PyRef fields = tupleOf({"device", "requires_grad", "sparse", "id", "strides", "sizes", "dtype"});
  llvm::Expected<oracle::TensorMetaSchema> schema = oracle::readTensorMetaSchema(fields.get());
  ASSERT_SUCCEEDED(schema);
  EXPECT_EQ(schema->device, 0u);
  EXPECT_EQ(schema->requiresGrad, 1u);
  EXPECT_EQ(schema->sparse, 2u);
  EXPECT_EQ(schema->id, 3u);
  EXPECT_EQ(schema->strides, 4u);
  EXPECT_EQ(schema->sizes, 5u);
  EXPECT_EQ(schema->dtype, 6u);
  EXPECT_EQ(schema->size, 7u);
}

TEST(TensorMetaSchemaTest, MismatchIsCaught) {
  test::expectFailure(
      oracle::readTensorMetaSchema(
          tupleOf({"id", "dtype", "shape", "strides", "device", "requires_grad"}).get()),
      "field 'shape' is not one it knows");
  test::expectFailure(
      oracle::readTensorMetaSchema(
          tupleOf({"id", "dtype", "sizes", "sizes", "strides", "device", "requires_grad"}).get()),
      "field 'sizes' appears twice");
  test::expectFailure(oracle::readTensorMetaSchema(
                          tupleOf({"id", "dtype", "sizes", "strides", "requires_grad"}).get()),
                      "field 'device' is missing");
  PyRef notTuple = PyRef::steal(PyUnicode_FromString("id"));
  test::expectFailure(oracle::readTensorMetaSchema(notTuple.get()),
                      "does not match what the C++ side reads");
}

} // namespace
