//===- PythonTestSupport.h - Helpers for tests that ask CPython -----------===//
//
// The bytecode toolkit's tests take their expectations from the running
// interpreter: Python source written in the test runs in a namespace of its
// own, and the C++ side reads the answers back. What those tests share lives
// here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/bytecode/StackEffect.h"
#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

#include <Python.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

/// Fails the test with the error's message unless \p value holds a value.
#define ASSERT_SUCCEEDED(value)                                                                    \
  ASSERT_TRUE(static_cast<bool>(value)) << llvm::toString((value).takeError())
#define EXPECT_SUCCEEDED(value)                                                                    \
  EXPECT_TRUE(static_cast<bool>(value)) << llvm::toString((value).takeError())

namespace dync::test {

/// Expects \p value to be an error whose message contains \p fragment.
template <typename T> void expectFailure(llvm::Expected<T> value, const std::string& fragment) {
  ASSERT_FALSE(static_cast<bool>(value)) << "expected an error mentioning '" << fragment << "'";
  std::string message = llvm::toString(value.takeError());
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

/// Python source of functions whose bytecode has structure and that run as
/// well: loops(n), with continue, break and a loop else; handlers(x), with
/// else, finally and a handler the optimizer leaves dead; generator(n), with
/// yield from.
extern const char* const kStructuredFunctions;

/// A fresh module namespace for a test's Python source. It starts out with
/// the helpers every test asks CPython through:
///
///   all_code(co)        co and every code object nested in it, outermost
///                       first
///   source_code(source, filename='<test>')
///                       all_code of source compiled as a module, as a list
///   module_code(*names) source_code of each named module's own source file
///   exception_rows(co)  dis's reading of co.co_exceptiontable, as tuples
///                       (start, end, target, depth, lasti) in bytes
class PythonNamespace {
public:
  PythonNamespace();

  /// Runs \p source as a module body here. On an exception, prints its
  /// traceback and returns false.
  [[nodiscard]] bool run(const std::string& source);

  /// What \p name is bound to here, or null. Borrowed.
  PyObject* global(const char* name) const;

  /// Calls the function bound to \p function with \p arguments. On an
  /// exception, prints its traceback and returns null.
  python::PyRef call(const char* function, std::initializer_list<PyObject*> arguments = {}) const;

private:
  python::PyRef dict_;
};

/// A fixture that runs its Python source in a fresh namespace before each
/// test; the test reads what it computed through global() and call().
class PythonTest : public ::testing::Test, protected PythonNamespace {
protected:
  explicit PythonTest(std::string source) : source_(std::move(source)) {}
  void SetUp() override;

private:
  std::string source_;
};

/// Whether a BytecodeTest also needs the stack effect table.
enum class NeedsStackEffects : bool { No, Yes };

/// A PythonTest that first reads the interpreter's opcode table, and the
/// stack effects bound to it when asked.
class BytecodeTest : public PythonTest {
protected:
  BytecodeTest(std::string source, NeedsStackEffects needsEffects)
      : PythonTest(std::move(source)), needsEffects_(needsEffects) {}
  void SetUp() override;

  uint8_t opcode(const char* name) const { return *opcodes.byName(name); }

  /// An instruction named \p name, otherwise as the decoder leaves fields it
  /// has no value for.
  bytecode::Instruction make(const char* name, uint32_t arg = 0, int32_t jumpTarget = -1) const;

  bytecode::OpcodeTable opcodes;
  bytecode::StackEffects effects;

private:
  NeedsStackEffects needsEffects_;
};

/// The contents of a bytes object.
std::vector<uint8_t> bytesOf(PyObject* bytes);

/// The int at \p index of a tuple.
long intAt(PyObject* tuple, Py_ssize_t index);

/// The items of a list of str.
std::vector<std::string> stringsOf(PyObject* list);

/// The code objects in a list of them. Borrowed: the list keeps them alive.
std::vector<PyCodeObject*> codeObjectsOf(PyObject* list);

/// A code object's co_qualname, to say which one an expectation is about.
const char* qualnameOf(PyCodeObject* code);

} // namespace dync::test
