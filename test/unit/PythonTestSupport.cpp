//===- PythonTestSupport.cpp - Helpers for tests that ask CPython ---------===//
#include "test/unit/PythonTestSupport.h"

namespace dync::test {

using python::PyRef;

namespace {

constexpr const char* kHelpers = R"py(
import dis, importlib.util

def all_code(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, 'co_code'):
            yield from all_code(c)

def source_code(source, filename='<test>'):
    return list(all_code(compile(source, filename, 'exec')))

def module_code(*names):
    codes = []
    for name in names:
        spec = importlib.util.find_spec(name)
        codes += source_code(spec.loader.get_source(name), spec.origin)
    return codes

def exception_rows(co):
    return [(e.start, e.end, e.target, e.depth, int(e.lasti))
            for e in dis._parse_exception_table(co)]
)py";

} // namespace

const char* const kStructuredFunctions = R"py(
def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        while total < i:
            total += 1
            if total > 100:
                break
        else:
            total -= 1
    return total

def handlers(x):
    try:
        y = 1 / x
    except ZeroDivisionError as e:
        y = str(e)
    except (TypeError, ValueError):
        y = None
    else:
        y = y * 2
    finally:
        x = 0
    try:
        pass
    except Exception:
        y = 'never'
    return y

def generator(n):
    for i in range(n):
        received = yield i
        if received:
            yield from range(received)
    return n
)py";

PythonNamespace::PythonNamespace() : dict_(PyRef::steal(PyDict_New())) {
  PyDict_SetItemString(dict_.get(), "__builtins__", PyEval_GetBuiltins());
  if (!run(kHelpers))
    ADD_FAILURE() << "the Python test helpers did not load";
}

bool PythonNamespace::run(const std::string& source) {
  PyRef result =
      PyRef::steal(PyRun_String(source.c_str(), Py_file_input, dict_.get(), dict_.get()));
  if (!result)
    PyErr_Print();
  return static_cast<bool>(result);
}

PyObject* PythonNamespace::global(const char* name) const {
  return PyDict_GetItemString(dict_.get(), name);
}

PyRef PythonNamespace::call(const char* function,
                            std::initializer_list<PyObject*> arguments) const {
  PyObject* callable = global(function);
  if (!callable) {
    ADD_FAILURE() << "no Python function '" << function << "'";
    return PyRef();
  }
  PyRef result = PyRef::steal(
      PyObject_Vectorcall(callable, arguments.begin(), arguments.size(), /*kwnames=*/nullptr));
  if (!result)
    PyErr_Print();
  return result;
}

void PythonTest::SetUp() { ASSERT_TRUE(run(source_)); }

void BytecodeTest::SetUp() {
  auto table = bytecode::OpcodeTable::fromInterpreter();
  ASSERT_SUCCEEDED(table);
  opcodes = std::move(*table);
  if (needsEffects_ == NeedsStackEffects::Yes) {
    auto created = bytecode::StackEffects::create(opcodes);
    ASSERT_SUCCEEDED(created);
    effects = std::move(*created);
  }
  PythonTest::SetUp();
}

bytecode::Instruction BytecodeTest::make(const char* name, uint32_t arg, int32_t jumpTarget) const {
  bytecode::Instruction instruction;
  instruction.opcode = opcode(name);
  instruction.arg = arg;
  instruction.jumpTarget = jumpTarget;
  return instruction;
}

std::vector<uint8_t> bytesOf(PyObject* bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(bytes));
  return std::vector<uint8_t>(data, data + PyBytes_GET_SIZE(bytes));
}

long intAt(PyObject* tuple, Py_ssize_t index) {
  return PyLong_AsLong(PyTuple_GET_ITEM(tuple, index));
}

std::vector<std::string> stringsOf(PyObject* list) {
  std::vector<std::string> result;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i)
    result.push_back(PyUnicode_AsUTF8(PyList_GET_ITEM(list, i)));
  return result;
}

std::vector<PyCodeObject*> codeObjectsOf(PyObject* list) {
  std::vector<PyCodeObject*> result;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i)
    result.push_back(reinterpret_cast<PyCodeObject*>(PyList_GET_ITEM(list, i)));
  return result;
}

const char* qualnameOf(PyCodeObject* code) { return PyUnicode_AsUTF8(code->co_qualname); }

} // namespace dync::test
