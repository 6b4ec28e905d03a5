// GoogleTest entry point: the bytecode toolkit reads its tables from a live
// interpreter, so every unit test runs with CPython initialized.
#include <Python.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  Py_InitializeEx(/*initsigs=*/0);
  int result = RUN_ALL_TESTS();
  if (Py_FinalizeEx() < 0)
    return 120;
  return result;
}
