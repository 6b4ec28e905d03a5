//===- ShimPyObjectsTest.cpp - The guard readers of Python objects --------===//
//
// Each reader must find what Python finds where the two agree, and must
// never run Python-level code: the objects below have properties, __getattr__
// and __eq__ methods that raise or record that they ran, and every test
// checks that no Python error is left set.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/dync_shim.h"

#include <Python.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

// Classes are defined in a module namespace named `guardmod`, so their
// __module__ is that.
constexpr const char* kPrelude = R"PY(
import collections
import math
import sys
import torch

calls = []

class Plain:
    def __init__(self):
        self.a = 1
        self.b = 'two'

class Raising:
    # A property whose getter raises, and __getattr__ recording every call:
    # the readers must reach neither.
    @property
    def prop(self):
        raise RuntimeError('property getter ran')
    def __getattr__(self, name):
        calls.append(name)
        raise AttributeError(name)

armed = [False]

class Collides:
    # Hashes like the str 'a' but is not one. Once armed, comparing with it
    # raises; before, it is unequal to everything else, so dicts holding it
    # and 'a' can be built.
    def __hash__(self):
        return hash('a')
    def __eq__(self, other):
        if armed[0]:
            calls.append('eq')
            raise RuntimeError('__eq__ ran')
        return NotImplemented

class Outer:
    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 3)
            self.heads = 4

class SubInner(Outer.Inner):
    pass

class ListSub(list):
    pass

class ListOwnItems(list):
    def __len__(self):
        return 0

    def __getitem__(self, index):
        return None

class IntSub(int):
    pass

class StrSub(str):
    pass

class DictSub(dict):
    def __getitem__(self, key):
        calls.append('getitem')
        raise KeyError(key)
)PY";

class ShimPyObjectsTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized())
      Py_InitializeEx(0);
    globals = PyDict_New();
    PyObject* name = PyUnicode_FromString("guardmod");
    PyDict_SetItemString(globals, "__name__", name);
    Py_DECREF(name);
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyObject* result = PyRun_String(kPrelude, Py_file_input, globals, globals);
    if (!result)
      PyErr_Print();
    Py_XDECREF(result);
  }

  void TearDown() override {
    EXPECT_FALSE(PyErr_Occurred()) << "a reader left a Python error set";
    PyErr_Clear();
    PyObject* calls = PyDict_GetItemString(globals, "calls");
    ASSERT_NE(calls, nullptr);
    EXPECT_EQ(PyList_GET_SIZE(calls), 0) << "Python-level code ran";
  }

  // Runs statements in the test module's namespace.
  static void exec(const char* code) {
    PyObject* result = PyRun_String(code, Py_file_input, globals, globals);
    if (!result)
      PyErr_Print();
    ASSERT_NE(result, nullptr);
    Py_DECREF(result);
  }

  // Evaluates an expression there; the module keeps the result alive as
  // `_last` so tests may hold it borrowed.
  static PyObject* eval(const char* expr) {
    PyObject* result = PyRun_String(expr, Py_eval_input, globals, globals);
    if (!result) {
      PyErr_Print();
      return nullptr;
    }
    PyDict_SetItemString(globals, "_last", result);
    Py_DECREF(result);
    return result;
  }

  // A new name in the module for \p expr's value, borrowed.
  static PyObject* keep(const char* name, const char* expr) {
    PyObject* value = eval(expr);
    if (value)
      PyDict_SetItemString(globals, name, value);
    return value;
  }

  static bool isTrue(const char* expr) { return eval(expr) == Py_True; }

  static inline PyObject* globals = nullptr;
};

TEST_F(ShimPyObjectsTest, InstanceAttrReadsInlineValues) {
  // A fresh instance of a plain class keeps its attributes inline (3.11's
  // managed dict, no dict object yet).
  PyObject* p = keep("p", "Plain()");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(dync_py_instance_attr(p, "a"), eval("p.a"));
  EXPECT_EQ(dync_py_instance_attr(p, "b"), eval("p.b"));
  EXPECT_EQ(dync_py_instance_attr(p, "c"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(p, ""), nullptr);
  // Class attributes and methods are not instance attributes.
  EXPECT_EQ(dync_py_instance_attr(p, "__init__"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(p, "__class__"), nullptr);
  // A deleted attribute is gone.
  exec("del p.b");
  EXPECT_EQ(dync_py_instance_attr(p, "b"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(p, "a"), eval("p.a"));
}

TEST_F(ShimPyObjectsTest, InstanceAttrReadsMaterializedDicts) {
  // Asking for __dict__ turns inline values into a dict; more attributes
  // than the shared keys hold do too.
  PyObject* p = keep("q", "Plain()");
  exec("q.__dict__['extra'] = 5");
  EXPECT_EQ(dync_py_instance_attr(p, "extra"), eval("q.extra"));
  EXPECT_EQ(dync_py_instance_attr(p, "a"), eval("q.a"));
  PyObject* many = keep("many", "Plain()");
  exec("for i in range(40): setattr(many, f'x{i}', i)");
  EXPECT_EQ(dync_py_instance_attr(many, "x39"), eval("many.x39"));
  EXPECT_EQ(dync_py_instance_attr(many, "a"), eval("many.a"));
  EXPECT_EQ(dync_py_instance_attr(many, "x40"), nullptr);
  // Non-ASCII names are compared as UTF-8.
  exec("setattr(many, '\u00f1', 'enye')");
  EXPECT_EQ(dync_py_instance_attr(many, "\xc3\xb1"), eval("getattr(many, '\u00f1')"));
}

TEST_F(ShimPyObjectsTest, InstanceAttrNeverRunsPythonCode) {
  PyObject* r = keep("r", "Raising()");
  // The property's getter would raise, __getattr__ would record the call.
  EXPECT_EQ(dync_py_instance_attr(r, "prop"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(r, "missing"), nullptr);
  // An instance value under the property's name is what the reader sees
  // (it is what the source means), still without calling the getter.
  exec("r.__dict__['prop'] = 7");
  EXPECT_EQ(dync_py_instance_attr(r, "prop"), eval("r.__dict__['prop']"));
  // A key that hashes like the name but is not a str is never compared.
  exec("r.__dict__[Collides()] = 'collides'");
  exec("armed[0] = True");
  EXPECT_EQ(dync_py_instance_attr(r, "a"), nullptr);
  exec("armed[0] = False");
  exec("r.__dict__['a'] = 'a'");
  PyObject* a = eval("r.__dict__['a']");
  exec("armed[0] = True");
  EXPECT_EQ(dync_py_instance_attr(r, "a"), a);
  exec("armed[0] = False");
}

TEST_F(ShimPyObjectsTest, InstanceAttrOfModulesAndOtherObjects) {
  // nn.Module subclasses: their state lives in the instance dict.
  PyObject* m = keep("m", "Outer.Inner()");
  PyObject* modules = dync_py_instance_attr(m, "_modules");
  ASSERT_NE(modules, nullptr);
  EXPECT_EQ(modules, eval("m._modules"));
  PyObject* fc = dync_py_dict_item(modules, "fc");
  EXPECT_EQ(fc, eval("m.fc"));
  PyObject* parameters = dync_py_instance_attr(fc, "_parameters");
  EXPECT_EQ(dync_py_dict_item(parameters, "weight"), eval("m.fc.weight"));
  EXPECT_EQ(dync_py_instance_attr(m, "training"), Py_True);
  EXPECT_EQ(dync_py_instance_attr(m, "heads"), eval("m.heads"));
  // `fc` is not an instance attribute of the module: Module.__getattr__
  // finds it in _modules, which the reader never calls.
  EXPECT_EQ(dync_py_instance_attr(m, "fc"), nullptr);

  // Module objects: their __dict__ is the module's namespace.
  PyObject* torch = eval("torch");
  EXPECT_EQ(dync_py_instance_attr(torch, "float32"), eval("torch.float32"));
  EXPECT_EQ(dync_py_instance_attr(torch, "no_such_name"), nullptr);

  // Objects without an instance dict.
  EXPECT_EQ(dync_py_instance_attr(eval("5"), "real"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(eval("(1, 2)"), "count"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(nullptr, "a"), nullptr);
  EXPECT_EQ(dync_py_instance_attr(m, nullptr), nullptr);
}

TEST_F(ShimPyObjectsTest, InstanceAttrReadsSlotsInPlace) {
  // A __slots__ member of a Python class is the object's own storage.
  exec("class Slotted:\n"
       "    __slots__ = ('kept', 'empty')\n"
       "    def __init__(self):\n"
       "        self.kept = 'kept value'\n");
  PyObject* s = keep("slotted", "Slotted()");
  EXPECT_EQ(dync_py_instance_attr(s, "kept"), eval("slotted.kept"));
  // An empty slot reads as absent (reading it in Python raises).
  EXPECT_EQ(dync_py_instance_attr(s, "empty"), nullptr);
  exec("slotted.empty = 4");
  EXPECT_EQ(dync_py_instance_attr(s, "empty"), eval("slotted.empty"));
  // A slotted dataclass; the members of an extension's heap type
  // (functools.partial's `func`) are read the same way, in place.
  PyObject* d = keep("frozen", "__import__('dataclasses').make_dataclass('F', [('n', int)], "
                               "slots=True, frozen=True)(3)");
  EXPECT_EQ(dync_py_instance_attr(d, "n"), eval("frozen.n"));
  PyObject* partial = keep("partial", "__import__('functools').partial(print, 1)");
  EXPECT_EQ(dync_py_instance_attr(partial, "func"), eval("print"));
  // A getset descriptor is code, never run.
  EXPECT_EQ(dync_py_instance_attr(s, "__class__"), nullptr);
  // A C member of a static type, as the generic lookup reads it:
  // defaultdict's default_factory.
  PyObject* counts = keep("counts", "collections.defaultdict(list)");
  EXPECT_EQ(dync_py_instance_attr(counts, "default_factory"), eval("list"));
  exec("counts.default_factory = None");
  EXPECT_EQ(dync_py_instance_attr(counts, "default_factory"), Py_None);
  // A class without slots anywhere in its MRO has no members to look up:
  // an instance attribute is still found, a missing one is absent.
  PyObject* plain = keep("plain", "Plain()");
  exec("plain.fresh = 5");
  EXPECT_EQ(dync_py_instance_attr(plain, "fresh"), eval("plain.fresh"));
  EXPECT_EQ(dync_py_instance_attr(plain, "missing"), nullptr);
}

TEST_F(ShimPyObjectsTest, DictItem) {
  PyObject* d = keep("d", "{'x': 1, 'y': [2]}");
  EXPECT_EQ(dync_py_dict_item(d, "x"), eval("d['x']"));
  EXPECT_EQ(dync_py_dict_item(d, "y"), eval("d['y']"));
  EXPECT_EQ(dync_py_dict_item(d, "z"), nullptr);
  // A dict with keys other than str is scanned, and the colliding key's
  // __eq__ never runs.
  PyObject* mixed = keep("mixed", "{Collides(): 1, 2: 'two', 'a': 'str a'}");
  PyObject* a = eval("mixed['a']");
  PyObject* onlyCollides = keep("only", "{Collides(): 1}");
  exec("armed[0] = True");
  EXPECT_EQ(dync_py_dict_item(mixed, "a"), a);
  EXPECT_EQ(dync_py_dict_item(onlyCollides, "a"), nullptr);
  exec("armed[0] = False");
  // A str subclass key is not a str key.
  PyObject* subKey = keep("subkey", "{StrSub('k'): 1}");
  EXPECT_EQ(dync_py_dict_item(subKey, "k"), nullptr);
  // A dict subclass's items are its dict's own, read without running its
  // __getitem__ (which would record the call); an OrderedDict's too.
  PyObject* sub = keep("sub", "DictSub(x=1)");
  EXPECT_EQ(dync_py_dict_item(sub, "x"), eval("dict.__getitem__(sub, 'x')"));
  EXPECT_EQ(dync_py_dict_item(sub, "y"), nullptr);
  PyObject* ordered = keep("ordered", "collections.OrderedDict(x=[1])");
  EXPECT_EQ(dync_py_dict_item(ordered, "x"), eval("ordered['x']"));
  PyObject* counts = keep("counts", "collections.defaultdict(list, x=[2])");
  EXPECT_EQ(dync_py_dict_item(counts, "x"), eval("counts['x']"));
  // A missing key is absent: the factory is never called.
  EXPECT_EQ(dync_py_dict_item(counts, "y"), nullptr);
  EXPECT_EQ(PyObject_Length(counts), 1);
  EXPECT_EQ(dync_py_dict_item(eval("[1]"), "x"), nullptr);
  EXPECT_EQ(dync_py_dict_item(nullptr, "x"), nullptr);
  EXPECT_EQ(dync_py_dict_item(d, nullptr), nullptr);
}

// Lookup keys are kept, interned, across calls; a kept key must keep
// finding exactly its own text, in any dict, and keys beyond what is kept
// (non-ASCII ones, or more than the cache holds) must still be found.
TEST_F(ShimPyObjectsTest, DictItemKeysAreReusedAcrossCalls) {
  PyObject* first = keep("first", "{'weight': 1, 'weigh': 2, 'bias': 3}");
  PyObject* second = keep("second", "{'weight': 'w', 'wéight': 'accented'}");
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(dync_py_dict_item(first, "weight"), eval("first['weight']"));
    EXPECT_EQ(dync_py_dict_item(first, "weigh"), eval("first['weigh']"));
    EXPECT_EQ(dync_py_dict_item(first, "weights"), nullptr);
    EXPECT_EQ(dync_py_dict_item(second, "weight"), eval("second['weight']"));
    EXPECT_EQ(dync_py_dict_item(second, "w\xc3\xa9ight"), eval("second['wéight']"));
    EXPECT_EQ(dync_py_dict_item(second, "bias"), nullptr);
  }
  // A key built at run time (not interned) is found by a kept probe.
  PyObject* built = keep("built", "{''.join(['ru', 'n', 'time']): 7}");
  EXPECT_EQ(dync_py_dict_item(built, "runtime"), eval("built['runtime']"));
  EXPECT_EQ(dync_py_dict_item(built, "runtime"), eval("built['runtime']"));
  // More distinct keys than are kept.
  exec("many = {f'key{i}': i for i in range(3000)}");
  PyObject* many = eval("many");
  for (int i = 0; i < 3000; i += 7) {
    std::string key = "key" + std::to_string(i);
    PyObject* value = dync_py_dict_item(many, key.c_str());
    ASSERT_NE(value, nullptr) << key;
    EXPECT_EQ(PyLong_AsLong(value), i) << key;
  }
  EXPECT_EQ(dync_py_dict_item(many, "key3000"), nullptr);
}

TEST_F(ShimPyObjectsTest, SequenceItem) {
  PyObject* l = keep("l", "[10, 20, 30]");
  EXPECT_EQ(dync_py_sequence_item(l, 0), eval("l[0]"));
  EXPECT_EQ(dync_py_sequence_item(l, 2), eval("l[2]"));
  EXPECT_EQ(dync_py_sequence_item(l, -1), eval("l[-1]"));
  EXPECT_EQ(dync_py_sequence_item(l, -3), eval("l[-3]"));
  EXPECT_EQ(dync_py_sequence_item(l, 3), nullptr);
  EXPECT_EQ(dync_py_sequence_item(l, -4), nullptr);
  EXPECT_EQ(dync_py_sequence_item(l, std::numeric_limits<int64_t>::min()), nullptr);
  EXPECT_EQ(dync_py_sequence_item(l, std::numeric_limits<int64_t>::max()), nullptr);
  PyObject* t = keep("t", "('a', 'b')");
  EXPECT_EQ(dync_py_sequence_item(t, 1), eval("t[1]"));
  EXPECT_EQ(dync_py_sequence_item(t, -2), eval("t[0]"));
  EXPECT_EQ(dync_py_sequence_item(eval("()"), 0), nullptr);
  // A subclass of list reading its items as list does gives them; one
  // with a __getitem__ of its own is not read, nor is a Sequential.
  PyObject* ls = keep("ls", "ListSub([1, 2])");
  EXPECT_EQ(dync_py_sequence_item(ls, 1), eval("ls[1]"));
  EXPECT_EQ(dync_py_sequence_item(eval("ListOwnItems([1, 2])"), 0), nullptr);
  EXPECT_EQ(dync_py_sequence_item(eval("torch.nn.Sequential(torch.nn.ReLU())"), 0), nullptr);
  // An exact dict or OrderedDict gives the value at a position of its
  // order (a module's hook table read by position); no negative positions.
  PyObject* d = keep("d", "{7: 'a', 3: 'b'}");
  EXPECT_EQ(dync_py_sequence_item(d, 0), eval("list(d.values())[0]"));
  EXPECT_EQ(dync_py_sequence_item(d, 1), eval("list(d.values())[1]"));
  EXPECT_EQ(dync_py_sequence_item(d, 2), nullptr);
  EXPECT_EQ(dync_py_sequence_item(d, -1), nullptr);
  PyObject* od =
      keep("od", "__import__('collections').OrderedDict([(1, 'x'), (2, 'y'), (3, 'z')])");
  ASSERT_TRUE(isTrue("od.move_to_end(1) is None"));
  EXPECT_EQ(dync_py_sequence_item(od, 0), eval("list(od.values())[0]"));
  EXPECT_EQ(dync_py_sequence_item(od, 2), eval("list(od.values())[2]"));
  EXPECT_EQ(dync_py_sequence_item(eval("DictSub({0: 1})"), 0), nullptr);
  EXPECT_EQ(dync_py_sequence_item(nullptr, 0), nullptr);
}

TEST_F(ShimPyObjectsTest, TypeIs) {
  PyObject* inner = keep("inner", "Outer.Inner()");
  ASSERT_TRUE(isTrue("type(inner).__module__ == 'guardmod' and "
                     "type(inner).__qualname__ == 'Outer.Inner'"));
  EXPECT_EQ(dync_py_type_is(inner, "guardmod", "Outer.Inner"), 1);
  EXPECT_EQ(dync_py_type_is(inner, "guardmod", "Inner"), 0);
  EXPECT_EQ(dync_py_type_is(inner, "other", "Outer.Inner"), 0);
  // A subclass is another type, and the base is not the subclass.
  PyObject* sub = keep("subinner", "SubInner()");
  EXPECT_EQ(dync_py_type_is(sub, "guardmod", "Outer.Inner"), 0);
  EXPECT_EQ(dync_py_type_is(sub, "guardmod", "SubInner"), 1);
  // Classes of libraries and static types, named as Python names them.
  EXPECT_EQ(dync_py_type_is(eval("torch.nn.Linear(1, 1)"), "torch.nn.modules.linear", "Linear"), 1);
  EXPECT_EQ(dync_py_type_is(eval("torch.zeros(1)"), "torch", "Tensor"), 1);
  ASSERT_TRUE(isTrue("type(collections.OrderedDict()).__module__ == 'collections'"));
  EXPECT_EQ(dync_py_type_is(eval("collections.OrderedDict()"), "collections", "OrderedDict"), 1);
  EXPECT_EQ(dync_py_type_is(eval("3"), "builtins", "int"), 1);
  EXPECT_EQ(dync_py_type_is(eval("True"), "builtins", "int"), 0);
  EXPECT_EQ(dync_py_type_is(eval("True"), "builtins", "bool"), 1);
  EXPECT_EQ(dync_py_type_is(eval("None"), "builtins", "NoneType"), 1);
  EXPECT_EQ(dync_py_type_is(eval("IntSub(3)"), "builtins", "int"), 0);
  EXPECT_EQ(dync_py_type_is(nullptr, "builtins", "int"), 0);
  EXPECT_EQ(dync_py_type_is(eval("3"), nullptr, "int"), 0);
}

TEST_F(ShimPyObjectsTest, EqualsConstants) {
  EXPECT_EQ(dync_py_is_none(Py_None), 1);
  EXPECT_EQ(dync_py_is_none(eval("0")), 0);
  EXPECT_EQ(dync_py_is_none(nullptr), 0);

  EXPECT_EQ(dync_py_equals_bool(Py_True, 1), 1);
  EXPECT_EQ(dync_py_equals_bool(Py_False, 0), 1);
  EXPECT_EQ(dync_py_equals_bool(Py_True, 0), 0);
  EXPECT_EQ(dync_py_equals_bool(eval("1"), 1), 0);
  EXPECT_EQ(dync_py_equals_bool(nullptr, 1), 0);

  EXPECT_EQ(dync_py_equals_int(eval("4"), 4), 1);
  EXPECT_EQ(dync_py_equals_int(eval("-5"), -5), 1);
  EXPECT_EQ(dync_py_equals_int(eval("4"), 5), 0);
  EXPECT_EQ(dync_py_equals_int(eval("-2**63"), std::numeric_limits<int64_t>::min()), 1);
  // True == 1 in Python, but a bool is not an int here.
  EXPECT_EQ(dync_py_equals_int(Py_True, 1), 0);
  EXPECT_EQ(dync_py_equals_int(Py_False, 0), 0);
  EXPECT_EQ(dync_py_equals_int(eval("IntSub(4)"), 4), 0);
  EXPECT_EQ(dync_py_equals_int(eval("4.0"), 4), 0);
  EXPECT_EQ(dync_py_equals_int(eval("2**64"), 0), 0);
  EXPECT_EQ(dync_py_equals_int(eval("2**70 + 4"), 4), 0);

  EXPECT_EQ(dync_py_equals_float(eval("0.5"), 0.5), 1);
  EXPECT_EQ(dync_py_equals_float(eval("0.5"), 0.25), 0);
  EXPECT_EQ(dync_py_equals_float(eval("float('nan')"), std::numeric_limits<double>::quiet_NaN()),
            1);
  EXPECT_EQ(dync_py_equals_float(eval("1.0"), std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(dync_py_equals_float(eval("float('inf')"), std::numeric_limits<double>::infinity()), 1);
  EXPECT_EQ(dync_py_equals_float(eval("-0.0"), 0.0), 0);
  EXPECT_EQ(dync_py_equals_float(eval("0.0"), 0.0), 1);
  EXPECT_EQ(dync_py_equals_float(eval("1"), 1.0), 0);

  EXPECT_EQ(dync_py_equals_str(eval("'fast'"), "fast", 4), 1);
  EXPECT_EQ(dync_py_equals_str(eval("'fast'"), "fas", 3), 0);
  EXPECT_EQ(dync_py_equals_str(eval("'fast'"), "slow", 4), 0);
  EXPECT_EQ(dync_py_equals_str(eval("''"), "", 0), 1);
  EXPECT_EQ(dync_py_equals_str(eval("'\u00f1'"), "\xc3\xb1", 2), 1);
  EXPECT_EQ(dync_py_equals_str(eval("'a\\x00b'"), "a\0b", 3), 1);
  EXPECT_EQ(dync_py_equals_str(eval("'a\\x00b'"), "a", 1), 0);
  EXPECT_EQ(dync_py_equals_str(eval("StrSub('fast')"), "fast", 4), 0);
  EXPECT_EQ(dync_py_equals_str(eval("b'fast'"), "fast", 4), 0);
  // A lone surrogate has no UTF-8 form: unequal, and no error is left.
  EXPECT_EQ(dync_py_equals_str(eval("'\\ud800'"), "\xed\xa0\x80", 3), 0);
  EXPECT_EQ(dync_py_equals_str(nullptr, "", 0), 0);
}

TEST_F(ShimPyObjectsTest, EqualsIntBeyond64Bits) {
  // The bytes are int.to_bytes(n, "little", signed=True) in the fewest
  // bytes: 2**64 needs nine, -(2**64) nine too (0x00 * 8, 0xff).
  const unsigned char twoTo64[] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
  const unsigned char minusTwoTo64[] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff};
  EXPECT_EQ(dync_py_equals_int_bytes(eval("2**64"), twoTo64, 9), 1);
  EXPECT_EQ(dync_py_equals_int_bytes(eval("-(2**64)"), minusTwoTo64, 9), 1);
  EXPECT_EQ(dync_py_equals_int_bytes(eval("2**64 + 1"), twoTo64, 9), 0);
  EXPECT_EQ(dync_py_equals_int_bytes(eval("-(2**64)"), twoTo64, 9), 0);
  // A number that needs more bytes is unequal, and no error is left.
  EXPECT_EQ(dync_py_equals_int_bytes(eval("2**100"), twoTo64, 9), 0);
  EXPECT_EQ(PyErr_Occurred(), nullptr);
  // Exact ints only: an int subclass, a float or a bool is not the int.
  EXPECT_EQ(dync_py_equals_int_bytes(eval("IntSub(2**64)"), twoTo64, 9), 0);
  EXPECT_EQ(dync_py_equals_int_bytes(eval("float(2**64)"), twoTo64, 9), 0);
  const unsigned char one[] = {1};
  EXPECT_EQ(dync_py_equals_int_bytes(eval("1"), one, 1), 1);
  EXPECT_EQ(dync_py_equals_int_bytes(eval("True"), one, 1), 0);
  // Longer than the shim's stack buffer.
  std::vector<unsigned char> big(80, 0);
  big[79] = 1;
  EXPECT_EQ(dync_py_equals_int_bytes(eval("2**(79*8)"), big.data(), big.size()), 1);
  EXPECT_EQ(dync_py_equals_int_bytes(eval("2**(79*8) + 1"), big.data(), big.size()), 0);
  EXPECT_EQ(dync_py_equals_int_bytes(nullptr, one, 1), 0);
}

TEST_F(ShimPyObjectsTest, GradModeAndDefaultDType) {
  EXPECT_EQ(dync_grad_mode_enabled(), 1);
  exec("_ng = torch.no_grad(); _ng.__enter__()");
  EXPECT_EQ(dync_grad_mode_enabled(), 0);
  exec("_ng.__exit__(None, None, None)");
  EXPECT_EQ(dync_grad_mode_enabled(), 1);
  exec("_im = torch.inference_mode(); _im.__enter__()");
  EXPECT_EQ(dync_grad_mode_enabled(), 0);
  exec("_im.__exit__(None, None, None)");

  EXPECT_EQ(dync_default_dtype(), DYNC_DTYPE_FLOAT32);
  exec("torch.set_default_dtype(torch.float64)");
  EXPECT_EQ(dync_default_dtype(), DYNC_DTYPE_FLOAT64);
  exec("torch.set_default_dtype(torch.float32)");
  EXPECT_EQ(dync_default_dtype(), DYNC_DTYPE_FLOAT32);
}

TEST_F(ShimPyObjectsTest, TableFields) {
  dync_shim_api api{};
  dync_shim_fill_api(&api);
  EXPECT_EQ(api.grad_mode_enabled, &dync_grad_mode_enabled);
  EXPECT_EQ(api.default_dtype, &dync_default_dtype);
  EXPECT_EQ(api.py_instance_attr, nullptr);
  dync_shim_fill_python_api(&api);
  EXPECT_EQ(api.py_instance_attr, &dync_py_instance_attr);
  EXPECT_EQ(api.py_dict_item, &dync_py_dict_item);
  EXPECT_EQ(api.py_sequence_item, &dync_py_sequence_item);
  EXPECT_EQ(api.py_type_is, &dync_py_type_is);
  EXPECT_EQ(api.py_is_none, &dync_py_is_none);
  EXPECT_EQ(api.py_equals_bool, &dync_py_equals_bool);
  EXPECT_EQ(api.py_equals_int, &dync_py_equals_int);
  EXPECT_EQ(api.py_equals_float, &dync_py_equals_float);
  EXPECT_EQ(api.py_equals_str, &dync_py_equals_str);
  EXPECT_EQ(api.py_length, &dync_py_length);
  EXPECT_EQ(api.py_dict_keys_are, &dync_py_dict_keys_are);
  EXPECT_EQ(api.py_int_value, &dync_py_int_value);
  EXPECT_EQ(api.py_subscript_int, &dync_py_subscript_int);
  EXPECT_EQ(api.py_dict_item_keyed, &dync_py_dict_item_keyed);
  EXPECT_EQ(api.py_dict_keys_are_keyed, &dync_py_dict_keys_are_keyed);
  EXPECT_EQ(api.py_dict_key_at, &dync_py_dict_key_at);
  EXPECT_EQ(api.py_dict_has_key, &dync_py_dict_has_key);
  EXPECT_EQ(api.py_class_attr_absent, &dync_py_class_attr_absent);
  EXPECT_EQ(api.py_equals_int_bytes, &dync_py_equals_int_bytes);
}

TEST_F(ShimPyObjectsTest, LengthOfExactContainers) {
  EXPECT_EQ(dync_py_length(eval("[1, 2, 3]")), 3);
  EXPECT_EQ(dync_py_length(eval("()")), 0);
  EXPECT_EQ(dync_py_length(eval("{'a': 1, 'b': 2}")), 2);
  // Subclasses may define __len__ in Python: never looked at; a list
  // subclass that does not has list's length.
  EXPECT_EQ(dync_py_length(keep("one", "ListSub([1])")), 1);
  EXPECT_EQ(dync_py_length(eval("ListOwnItems([1])")), -1);
  EXPECT_EQ(dync_py_length(eval("DictSub(a=1)")), -1);
  EXPECT_EQ(dync_py_length(eval("'text'")), -1);
  EXPECT_EQ(dync_py_length(nullptr), -1);
}

TEST_F(ShimPyObjectsTest, IntValueOfExactInts) {
  int64_t value = 0;
  EXPECT_EQ(dync_py_int_value(eval("17"), &value), 1);
  EXPECT_EQ(value, 17);
  EXPECT_EQ(dync_py_int_value(eval("-(2 ** 63)"), &value), 1);
  EXPECT_EQ(value, INT64_MIN);
  // A bool, a float, an int past 64 bits: not a size's value.
  EXPECT_EQ(dync_py_int_value(eval("True"), &value), 0);
  EXPECT_EQ(dync_py_int_value(eval("4.0"), &value), 0);
  EXPECT_EQ(dync_py_int_value(eval("2 ** 63"), &value), 0);
  EXPECT_EQ(dync_py_int_value(eval("IntSub(4)"), &value), 0);
  EXPECT_EQ(dync_py_int_value(nullptr, &value), 0);
}

TEST_F(ShimPyObjectsTest, DictKeysInOrder) {
  const char* keys[] = {"a", "b\0c", "\xc3\xa9"};
  const int64_t sizes[] = {1, 3, 2};
  EXPECT_EQ(dync_py_dict_keys_are(eval("{'a': 1, 'b\\0c': 2, '\\u00e9': 3}"), keys, sizes, 3), 1);
  // Another order, another key, one more or one fewer: no match.
  EXPECT_EQ(dync_py_dict_keys_are(eval("{'b\\0c': 2, 'a': 1, '\\u00e9': 3}"), keys, sizes, 3), 0);
  EXPECT_EQ(dync_py_dict_keys_are(eval("{'a': 1, 'b': 2, '\\u00e9': 3}"), keys, sizes, 3), 0);
  EXPECT_EQ(dync_py_dict_keys_are(eval("{'a': 1, 'b\\0c': 2}"), keys, sizes, 3), 0);
  EXPECT_EQ(dync_py_dict_keys_are(eval("{'a': 1, 'b\\0c': 2}"), keys, sizes, 1), 0);
  EXPECT_EQ(dync_py_dict_keys_are(eval("{}"), keys, sizes, 0), 1);
  // Dict subclasses by their dict's order; an OrderedDict by its own, which
  // move_to_end changes (its storage order stays), walked without running
  // a subclass's __iter__. Only str keys.
  EXPECT_EQ(dync_py_dict_keys_are(eval("DictSub(a=1)"), keys, sizes, 1), 1);
  EXPECT_EQ(dync_py_dict_keys_are(eval("DictSub(b=1)"), keys, sizes, 1), 0);
  exec("ordered = collections.OrderedDict([('\\u00e9', 3), ('a', 1), ('b\\0c', 2)])");
  PyObject* ordered = eval("ordered");
  EXPECT_EQ(dync_py_dict_keys_are(ordered, keys, sizes, 3), 0);
  exec("ordered.move_to_end('\\u00e9')");
  EXPECT_EQ(dync_py_dict_keys_are(ordered, keys, sizes, 3), 1);
  exec("class OwnIter(collections.OrderedDict):\n"
       "    def __iter__(self):\n"
       "        calls.append('iter')\n"
       "        return iter(())\n"
       "own = OwnIter(a=1)");
  EXPECT_EQ(dync_py_dict_keys_are(eval("own"), keys, sizes, 1), 1);
  EXPECT_EQ(dync_py_dict_keys_are(eval("collections.defaultdict(int, a=1)"), keys, sizes, 1), 1);
  EXPECT_EQ(dync_py_dict_keys_are(eval("{1: 1}"), keys, sizes, 1), 0);
  EXPECT_EQ(dync_py_dict_keys_are(nullptr, keys, sizes, 0), 0);
}

/// A dict key encoded as the artifact encodes it for the keyed readers.
class KeyBytes {
public:
  KeyBytes& integer(int64_t value) { return tag('i').raw(value); }
  KeyBytes& str(const std::string& value) {
    tag('s').raw(static_cast<int64_t>(value.size()));
    bytes_ += value;
    return *this;
  }
  KeyBytes& boolean(bool value) { return tag('b').tag(value ? 1 : 0); }
  KeyBytes& floating(double value) { return tag('f').raw(value); }
  KeyBytes& none() { return tag('n'); }
  KeyBytes& tuple(int64_t count) { return tag('t').raw(count); }
  const char* data() const { return bytes_.data(); }
  int64_t size() const { return static_cast<int64_t>(bytes_.size()); }

private:
  KeyBytes& tag(char c) {
    bytes_ += c;
    return *this;
  }
  template <typename T> KeyBytes& raw(T value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  std::string bytes_;
};

TEST_F(ShimPyObjectsTest, EntriesUnderKeysOfOtherTypes) {
  exec("keyed = {0: 'zero', 1.5: 'float', True: 'true', None: 'none', (1, 'a'): 'pair', "
       "-3: 'minus', (): 'empty'}");
  PyObject* keyed = eval("keyed");
  auto item = [&](const KeyBytes& key) {
    return dync_py_dict_item_keyed(keyed, key.data(), key.size());
  };
  EXPECT_EQ(item(KeyBytes().integer(0)), eval("keyed[0]"));
  EXPECT_EQ(item(KeyBytes().floating(1.5)), eval("keyed[1.5]"));
  EXPECT_EQ(item(KeyBytes().boolean(true)), eval("keyed[True]"));
  EXPECT_EQ(item(KeyBytes().none()), eval("keyed[None]"));
  EXPECT_EQ(item(KeyBytes().tuple(2).integer(1).str("a")), eval("keyed[(1, 'a')]"));
  EXPECT_EQ(item(KeyBytes().tuple(0)), eval("keyed[()]"));
  EXPECT_EQ(dync_py_subscript_int(keyed, -3), eval("keyed[-3]"));
  // The exact type: 0.0 and False are keys a lookup would find under 0,
  // but not these readers; a tuple of other elements or length is another.
  EXPECT_EQ(item(KeyBytes().floating(0.0)), nullptr);
  EXPECT_EQ(item(KeyBytes().boolean(false)), nullptr);
  EXPECT_EQ(item(KeyBytes().integer(1)), nullptr);
  EXPECT_EQ(item(KeyBytes().tuple(2).integer(1).str("b")), nullptr);
  EXPECT_EQ(item(KeyBytes().tuple(1).integer(1)), nullptr);
  // A malformed encoding reads nothing.
  EXPECT_EQ(item(KeyBytes().tuple(3).integer(1)), nullptr);
  // [i] is Python's subscript: a list's item, a dict's int key.
  EXPECT_EQ(dync_py_subscript_int(eval("[5, 6]"), -1), eval("6"));
  EXPECT_EQ(dync_py_subscript_int(eval("{1: 'x'}"), 0), nullptr);
  // A key that hashes like another and has an __eq__ is never asked.
  exec("armed[0] = False\ncolliding = {Collides(): 1, 'k': 2, 7: 3}\narmed[0] = True");
  EXPECT_EQ(dync_py_subscript_int(eval("colliding"), 7), eval("3"));
  exec("armed[0] = False");
}

TEST_F(ShimPyObjectsTest, KeysOfOtherTypesInOrder) {
  KeyBytes keys;
  keys.integer(0).boolean(true).none().floating(2.5).tuple(2).integer(1).str("a");
  auto keysAre = [&](PyObject* dict, int64_t count) {
    return dync_py_dict_keys_are_keyed(dict, keys.data(), keys.size(), count);
  };
  EXPECT_EQ(keysAre(eval("{0: 1, True: 2, None: 3, 2.5: 4, (1, 'a'): 5}"), 5), 1);
  // Another order, a key of another type or value, one fewer: no match.
  EXPECT_EQ(keysAre(eval("{True: 2, 0: 1, None: 3, 2.5: 4, (1, 'a'): 5}"), 5), 0);
  EXPECT_EQ(keysAre(eval("{0.0: 1, True: 2, None: 3, 2.5: 4, (1, 'a'): 5}"), 5), 0);
  EXPECT_EQ(keysAre(eval("{False: 1, 1: 2, None: 3, 2.5: 4, (1, 'a'): 5}"), 5), 0);
  EXPECT_EQ(keysAre(eval("{0: 1, True: 2, None: 3, 2.5: 4, (1, 'b'): 5}"), 5), 0);
  EXPECT_EQ(keysAre(eval("{0: 1, True: 2, None: 3, 2.5: 4}"), 5), 0);
  // 0.0 is not -0.0 to a guard.
  KeyBytes zero;
  zero.floating(0.0);
  EXPECT_EQ(dync_py_dict_keys_are_keyed(eval("{-0.0: 1}"), zero.data(), zero.size(), 1), 0);
  EXPECT_EQ(dync_py_dict_keys_are_keyed(eval("{0.0: 1}"), zero.data(), zero.size(), 1), 1);
  // An OrderedDict in its own order.
  exec("ordered_keys = collections.OrderedDict([(True, 2), (0, 1), (None, 3), (2.5, 4), "
       "((1, 'a'), 5)])");
  EXPECT_EQ(keysAre(eval("ordered_keys"), 5), 0);
  exec("ordered_keys.move_to_end(0, last=False)");
  EXPECT_EQ(keysAre(eval("ordered_keys"), 5), 1);
  EXPECT_EQ(keysAre(nullptr, 0), 0);
}

TEST_F(ShimPyObjectsTest, KeysByPositionAndMembership) {
  exec("hooks = collections.OrderedDict([(7, 'a'), (3, 'b')])\nhooks.move_to_end(7)");
  PyObject* hooks = eval("hooks");
  EXPECT_EQ(dync_py_dict_key_at(hooks, 0), eval("list(hooks)[0]"));
  EXPECT_EQ(dync_py_sequence_item(hooks, 1), eval("hooks[7]"));
  EXPECT_EQ(dync_py_dict_key_at(hooks, 2), nullptr);
  EXPECT_EQ(dync_py_dict_key_at(hooks, -1), nullptr);
  EXPECT_EQ(dync_py_dict_has_key(eval("{3: True}"), eval("3")), 1);
  EXPECT_EQ(dync_py_dict_has_key(eval("{3: True}"), eval("7")), 0);
  // Python's `in`: True is the key 1.
  EXPECT_EQ(dync_py_dict_has_key(eval("{True: True}"), eval("1")), 1);
  // A key whose __eq__ could answer: cannot tell.
  exec("armed[0] = False\nwith_object = {Collides(): True}\narmed[0] = True");
  EXPECT_EQ(dync_py_dict_has_key(eval("with_object"), eval("3")), -1);
  exec("armed[0] = False");
  EXPECT_EQ(dync_py_dict_has_key(eval("[3]"), eval("3")), -1);
  // A class's attribute, present or not along the MRO.
  EXPECT_EQ(dync_py_class_attr_absent(eval("DictSub()"), "__missing__"), 1);
  EXPECT_EQ(dync_py_class_attr_absent(eval("DictSub()"), "__getitem__"), 0);
  EXPECT_EQ(dync_py_class_attr_absent(eval("Plain()"), "a"), 1);
}

// The readers of a complete guard set: each agrees with Python where the
// two agree and runs no Python code.
TEST_F(ShimPyObjectsTest, TensorInfoOfExactTensorsOnly) {
  dync_tensor_info info;
  EXPECT_EQ(dync_py_tensor_info(eval("torch.randn(2, 3)"), &info), 1);
  EXPECT_EQ(info.dim, 2);
  EXPECT_EQ(info.flags, 0);
  EXPECT_EQ(dync_py_tensor_info(eval("torch.nn.Parameter(torch.randn(2))"), &info), 1);
  exec("class TensorSub(torch.Tensor): pass");
  EXPECT_EQ(dync_py_tensor_info(eval("torch.randn(2).as_subclass(TensorSub)"), &info), 0);
  EXPECT_EQ(dync_py_tensor_info(eval("[1.0]"), &info), 0);
  EXPECT_EQ(dync_py_tensor_info(eval("torch.randn(2).conj()"), &info), 1);
  EXPECT_EQ(info.flags, 0);
  EXPECT_EQ(dync_py_tensor_info(eval("torch.randn(2, dtype=torch.complex64).conj()"), &info), 1);
  EXPECT_EQ(info.flags, DYNC_TENSOR_CONJ);
  EXPECT_EQ(dync_py_tensor_info(eval("torch._neg_view(torch.randn(2))"), &info), 1);
  EXPECT_EQ(info.flags, DYNC_TENSOR_NEG);
  EXPECT_EQ(dync_py_tensor_info(nullptr, &info), 0);
}

// A sparse COO tensor is read by its own reader, with its sparse_dim, nnz
// and coalesced-ness; each reader refuses the other's tensors.
TEST_F(ShimPyObjectsTest, SparseCooInfoOfSparseCooTensorsOnly) {
  exec("sparse = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), "
       "torch.ones(3, 4), (2, 3, 4))");
  dync_tensor_info info;
  int64_t fields[3] = {-1, -1, -1};
  EXPECT_EQ(dync_py_sparse_coo_info(eval("sparse"), &info, fields), 1);
  EXPECT_EQ(info.dim, 3);
  EXPECT_EQ(info.sizes[2], 4);
  EXPECT_EQ(info.strides, nullptr);
  EXPECT_EQ(info.flags, 0);
  EXPECT_EQ(fields[0], 2);
  EXPECT_EQ(fields[1], 3);
  EXPECT_EQ(fields[2], 0);
  EXPECT_EQ(dync_py_sparse_coo_info(eval("sparse.coalesce()"), &info, fields), 1);
  EXPECT_EQ(fields[2], 1);
  EXPECT_EQ(dync_py_tensor_info(eval("sparse"), &info), 0);
  EXPECT_EQ(dync_py_sparse_coo_info(eval("torch.randn(2, 3)"), &info, fields), 0);
  EXPECT_EQ(dync_py_sparse_coo_info(eval("torch.eye(3).to_sparse_csr()"), &info, fields), 0);
  EXPECT_EQ(dync_py_sparse_coo_info(nullptr, &info, fields), 0);
}

TEST_F(ShimPyObjectsTest, ModulesClassAttributesAndCells) {
  EXPECT_EQ(dync_py_module("torch.nn.modules.module"),
            eval("sys.modules['torch.nn.modules.module']"));
  EXPECT_EQ(dync_py_module("no.such.module"), nullptr);
  exec("class Base:\n    scale = 0.5\n    def f(self): pass\n"
       "class Derived(Base):\n    @property\n    def g(self): calls.append('g')\n"
       "d = Derived()\nd.scale = 2.0");
  // The class's attribute, through the MRO, as stored: not the instance's,
  // not a bound method, not a property's result.
  EXPECT_EQ(dync_py_class_attr(eval("d"), "scale"), eval("Base.__dict__['scale']"));
  EXPECT_EQ(dync_py_class_attr(eval("d"), "f"), eval("Base.__dict__['f']"));
  EXPECT_EQ(dync_py_class_attr(eval("d"), "g"), eval("Derived.__dict__['g']"));
  EXPECT_EQ(dync_py_class_attr(eval("d"), "missing"), nullptr);
  exec("def make(k):\n    def inner(): return k\n    return inner\nclosed = make(7)");
  EXPECT_EQ(dync_py_closure_cell(eval("closed"), 0), eval("closed.__closure__[0].cell_contents"));
  EXPECT_EQ(dync_py_closure_cell(eval("closed"), 1), nullptr);
  EXPECT_EQ(dync_py_closure_cell(eval("closed"), -1), nullptr);
  EXPECT_EQ(dync_py_closure_cell(eval("make"), 0), nullptr);
}

TEST_F(ShimPyObjectsTest, EmptyTablesAndAbsentAttributes) {
  EXPECT_EQ(dync_py_is_empty_dict(eval("{}")), 1);
  EXPECT_EQ(dync_py_is_empty_dict(eval("collections.OrderedDict()")), 1);
  EXPECT_EQ(dync_py_is_empty_dict(eval("collections.OrderedDict(a=1)")), 0);
  EXPECT_EQ(dync_py_is_empty_dict(eval("DictSub()")), 0);
  EXPECT_EQ(dync_py_is_empty_dict(eval("[]")), 0);
  EXPECT_EQ(dync_py_is_empty_dict(eval("torch.nn.Linear(2, 2)._forward_hooks")), 1);
  exec("p2 = Plain()");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("p2"), "a"), 0);
  EXPECT_EQ(dync_py_instance_attr_absent(eval("p2"), "zzz"), 1);
  EXPECT_EQ(dync_py_instance_attr_absent(eval("torch.nn.Linear(2, 2)"), "forward"), 1);
  exec("lin = torch.nn.Linear(2, 2)\nlin.forward = lambda x: x");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("lin"), "forward"), 0);
  // Objects without an instance dict have no attribute there.
  EXPECT_EQ(dync_py_instance_attr_absent(eval("5"), "real"), 1);
}

TEST_F(ShimPyObjectsTest, ModuleCompiledInPlaceCallsItsOwnCallImpl) {
  // nn.Module.compile stores torch.compile(self._call_impl) on the
  // instance; that computes what _call_impl does, so it counts as absent,
  // as None does. Anything else stored there (another module's, a compiled
  // forward, which skips the hooks, a user's function) does not.
  exec("a = torch.nn.Linear(2, 2)\nb = torch.nn.Linear(2, 2)\na.compile()");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("a"), "_compiled_call_impl"), 1);
  EXPECT_EQ(dync_py_instance_attr_absent(eval("b"), "_compiled_call_impl"), 1);
  exec("b._compiled_call_impl = a._compiled_call_impl");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("b"), "_compiled_call_impl"), 0);
  exec("b._compiled_call_impl = torch.compile(b.forward)");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("b"), "_compiled_call_impl"), 0);
  exec("b._compiled_call_impl = lambda x: x");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("b"), "_compiled_call_impl"), 0);
  // None, as the class's default, makes nn.Module's call run _call_impl.
  exec("b._compiled_call_impl = None");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("b"), "_compiled_call_impl"), 1);
  // Only that attribute reads through: a compiled method elsewhere is set.
  exec("b.helper = torch.compile(b._call_impl)");
  EXPECT_EQ(dync_py_instance_attr_absent(eval("b"), "helper"), 0);
  EXPECT_FALSE(PyErr_Occurred());
}

TEST_F(ShimPyObjectsTest, FunctionsByModuleAndName) {
  exec("def helper():\n    pass");
  PyObject* helper = eval("helper");
  const char* module = "__main__";
  PyObject* name = eval("helper.__module__");
  std::string actual = PyUnicode_AsUTF8(name);
  long line = PyLong_AsLong(eval("helper.__code__.co_firstlineno"));
  EXPECT_EQ(dync_py_function_is(helper, actual.c_str(), "helper", line), 1);
  // The line moves with edits above the function; load checks the code.
  EXPECT_EQ(dync_py_function_is(helper, actual.c_str(), "helper", line + 1), 1);
  EXPECT_EQ(dync_py_function_is(helper, actual.c_str(), "other", line), 0);
  EXPECT_EQ(dync_py_function_is(helper, actual == module ? "x" : module, "helper", line), 0);
  EXPECT_EQ(dync_py_function_is(eval("torch.relu"), "torch", "relu", 0), 0);
  EXPECT_EQ(dync_py_builtin_is(eval("torch.relu"), "torch", "relu"), 1);
  EXPECT_EQ(dync_py_builtin_is(eval("torch.tanh"), "torch", "relu"), 0);
  EXPECT_EQ(dync_py_builtin_is(eval("math.tanh"), "torch", "tanh"), 0);
  EXPECT_EQ(dync_py_builtin_is(helper, "torch", "relu"), 0);
}

} // namespace
