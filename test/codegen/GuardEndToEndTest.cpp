//===- GuardEndToEndTest.cpp - Compiled guards on real Python frames ------===//
//
// Inputs/guarded.dync is compiled with dync-llc into an artifact and loaded
// with the runtime's loader, given the shim table with its Python readers,
// as the `dync` module does. Its guard function is then called directly, the
// way the frame hook calls it, on a localsplus array of real Python objects
// (an embedded interpreter with torch) and the module's globals. Each test
// changes one thing about a frame that passes and checks that the guard
// misses with the reason naming that thing, and that no Python error is left
// behind.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/Loader.h"
#include "runtime/shim/dync_shim.h"

#include "llvm/Support/Program.h"

#include <Python.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace dync;

namespace {

// The module the guarded code lives in (`__name__` is `model`): its classes
// and the globals the guards read. frame(**changes) returns the values of the
// guards block's locals, in its order, for a frame every guard accepts,
// with `changes` applied.
constexpr const char* kModel = R"PY(
import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4, bias=False)

class SubModel(Model):
    pass

config = {'heads': 4}

NAMES = ['self', 'x', 'sq', 't', 'flag', 'count', 'scale', 'mode', 'mask', 'items']

def frame(**changes):
    values = dict(self=Model(), x=torch.randn(4, 8), sq=torch.randn(3, 3),
                  t=torch.randn(4, 8).t(), flag=True, count=1, scale=0.5,
                  mode='fast', mask=None, items=[1, 7])
    values.update(changes)
    return [values[name] for name in NAMES]
)PY";

constexpr const char* kX = "tensor L['x'] : tensor<f32, [batch, 8]>";
constexpr const char* kSq = "tensor L['sq'] : tensor<f32, [n, n]>";
constexpr const char* kT = "tensor L['t'] : tensor<f32, [8, 4], [1, 8]>";
constexpr const char* kWeight = "tensor L['self']._modules['fc']._parameters['weight'] : "
                                "tensor<f32, [4, 8], requires_grad>";

/// The guard's answer for one frame.
struct Outcome {
  int hit;
  std::string reason;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << (o.hit ? "hit" : "miss") << " '" << o.reason << "'";
}

const dync_shim_api* fullApi() {
  static dync_shim_api api = [] {
    dync_shim_api table{};
    dync_shim_fill_api(&table);
    dync_shim_fill_python_api(&table);
    return table;
  }();
  return &api;
}

class GuardEndToEnd : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized())
      Py_InitializeEx(0);
    module = PyDict_New();
    PyObject* name = PyUnicode_FromString("model");
    PyDict_SetItemString(module, "__name__", name);
    Py_DECREF(name);
    PyDict_SetItemString(module, "__builtins__", PyEval_GetBuiltins());
    PyObject* result = PyRun_String(kModel, Py_file_input, module, module);
    if (!result)
      PyErr_Print();
    Py_XDECREF(result);

    dir = fs::temp_directory_path() / ("dync-guard-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    path = compile(dir / "guarded.so");
    runtime::LoadOptions options;
    options.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
    options.api = fullApi();
    loaded = new runtime::LoadResult(runtime::loadArtifact(path, options));
  }

  static void TearDownTestSuite() {
    delete loaded;
    loaded = nullptr;
    fs::remove_all(dir);
  }

  void SetUp() override {
    ASSERT_NE(module, nullptr);
    ASSERT_TRUE(*loaded) << loaded->message;
    ASSERT_EQ(loaded->artifact->descriptor().num_entries, 1u);
  }

  void TearDown() override {
    EXPECT_FALSE(PyErr_Occurred()) << "a guard left a Python error set";
    PyErr_Clear();
  }

  static std::string compile(const fs::path& out) {
    std::string input = DYNC_TEST_INPUTS_DIR "/guarded.dync";
    std::string output = out.string();
    llvm::StringRef args[] = {DYNC_LLC, input, "-o", output};
    std::string error;
    int rc = llvm::sys::ExecuteAndWait(DYNC_LLC, args, std::nullopt, {}, 0, 0, &error);
    EXPECT_EQ(rc, 0) << error;
    return output;
  }

  static void exec(const char* code) {
    PyObject* result = PyRun_String(code, Py_file_input, module, module);
    if (!result)
      PyErr_Print();
    ASSERT_NE(result, nullptr);
    Py_DECREF(result);
  }

  static dync_guard_fn guardOf(const runtime::Artifact& artifact) {
    return artifact.descriptor().entries[0].guard;
  }

  // Runs the guard on frame(<changes>) with the module's globals; a slot
  // listed in \p nullSlots is an unbound local.
  static Outcome run(const std::string& changes, std::vector<size_t> nullSlots = {},
                     PyObject* globals = nullptr, dync_guard_fn guard = nullptr) {
    PyObject* values =
        PyRun_String(("frame(" + changes + ")").c_str(), Py_eval_input, module, module);
    if (!values) {
      PyErr_Print();
      ADD_FAILURE() << "frame(" << changes << ") raised";
      return {-1, ""};
    }
    std::vector<PyObject*> locals;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); ++i)
      locals.push_back(PyList_GET_ITEM(values, i));
    for (size_t slot : nullSlots)
      locals[slot] = nullptr;
    const char* reason = nullptr;
    if (!guard)
      guard = guardOf(*loaded->artifact);
    int hit = guard(locals.data(), globals ? globals : module, &reason);
    Py_DECREF(values);
    return {hit, hit ? (reason ? "reason set on a hit" : "") : (reason ? reason : "no reason")};
  }

  static void expectHit(const std::string& changes) {
    Outcome o = run(changes);
    EXPECT_EQ(o.hit, 1) << "frame(" << changes << "): " << o;
  }

  static void expectMiss(const std::string& changes, const std::string& reason) {
    Outcome o = run(changes);
    EXPECT_EQ(o.hit, 0) << "frame(" << changes << ")";
    EXPECT_EQ(o.reason, reason) << "frame(" << changes << ")";
  }

  static inline PyObject* module = nullptr;
  static inline fs::path dir;
  static inline std::string path;
  static inline runtime::LoadResult* loaded = nullptr;
};

TEST_F(GuardEndToEnd, Hit) {
  expectHit("");
  // Symbolic sizes anywhere in their ranges; a tuple is as good as a list.
  expectHit("x=torch.randn(2, 8), sq=torch.randn(1, 1)");
  expectHit("x=torch.randn(64, 8), sq=torch.randn(16, 16), items=(0, 7)");
}

TEST_F(GuardEndToEnd, TensorMetadata) {
  expectMiss("x=torch.randn(4, 8, dtype=torch.float64)", std::string(kX) + ": dtype is not f32");
  expectMiss("x=torch.randn(4, 8, 1)", std::string(kX) + ": dim() is not 2");
  expectMiss("x=torch.randn(4)", std::string(kX) + ": dim() is not 2");
  expectMiss("x=torch.randn(4, 9)", std::string(kX) + ": size(1) is not 8");
  expectMiss("x=torch.randn(8, 4).t()", std::string(kX) + ": not contiguous");
  expectMiss("x=torch.randn(4, 8, requires_grad=True)",
             std::string(kX) + ": requires_grad is not false");
  expectMiss("t=torch.randn(8, 4)", std::string(kT) + ": stride(0) is not 1");
}

TEST_F(GuardEndToEnd, SymbolsRangesAndRelations) {
  // batch: [2, 64] with batch mod 2 == 0, read from L['x'].size(0).
  expectMiss("x=torch.randn(66, 8)", std::string(kX) + ": size(0) (batch) is outside [2, 64]");
  expectMiss("x=torch.randn(0, 8)", std::string(kX) + ": size(0) (batch) is outside [2, 64]");
  expectMiss("x=torch.randn(5, 8)",
             "relation batch mod 2 == 0 does not hold (batch = L['x'].size(0))");
  // n is both dimensions of L['sq'].
  expectHit("sq=torch.randn(5, 5)");
  expectMiss("sq=torch.randn(5, 6)", std::string(kSq) + ": size(1) is not n = L['sq'].size(0)");
  expectMiss("sq=torch.randn(17, 17)", std::string(kSq) + ": size(0) (n) is outside [1, 16]");
}

constexpr const char* kNotATensor =
    ": not exactly a torch.Tensor or nn.Parameter with plain sizes and strides";

TEST_F(GuardEndToEnd, NotATensor) {
  expectMiss("x=[1.0]", std::string(kX) + kNotATensor);
  expectMiss("x=None", std::string(kX) + kNotATensor);
  // A subclass may change what operations do, even without overriding
  // __torch_function__ (results keep its class).
  exec("class Sub(torch.Tensor): pass");
  expectMiss("x=torch.randn(4, 8).as_subclass(Sub)", std::string(kX) + kNotATensor);
  // Lazy negative and conjugate views hold data that is not what they mean.
  expectMiss("x=torch._neg_view(torch.randn(4, 8))", std::string(kX) + ": the negative bit is set");
  expectMiss("x=torch.nn.Parameter(torch.randn(4, 8))",
             std::string(kX) + ": requires_grad is not false");
}

TEST_F(GuardEndToEnd, ModuleAttributes) {
  // L['self']._modules['fc']._parameters['weight'] is read without
  // Module.__getattr__; each step that is missing says which.
  exec("m = Model(); del m._modules['fc']");
  expectMiss("self=m", std::string(kWeight) + ": L['self']._modules['fc'] could not be read");
  exec("m = Model(); m.fc.weight = None");
  expectMiss("self=m", std::string(kWeight) + kNotATensor);
  exec("m = Model(); m.fc.weight.requires_grad_(False)");
  expectMiss("self=m", std::string(kWeight) + ": requires_grad is not true");
  exec("m = Model(); m.fc = torch.nn.Linear(8, 5, bias=False)");
  expectMiss("self=m", std::string(kWeight) + ": size(0) is not 4");
  exec("m = Model(); m.train(False)");
  expectMiss("self=m", "equals L['self'].training : true");
}

TEST_F(GuardEndToEnd, TypeOfModule) {
  expectMiss("self=SubModel()", "type L['self'] : model:Model");
  expectMiss("self=torch.nn.Linear(8, 4)", "type L['self'] : model:Model");
  expectMiss("self=None", "type L['self'] : model:Model");
}

TEST_F(GuardEndToEnd, EqualsConstants) {
  expectMiss("flag=False", "equals L['flag'] : true");
  expectMiss("flag=1", "equals L['flag'] : true");
  // True == 1 in Python, but it is not the int 1.
  expectMiss("count=True", "equals L['count'] : 1");
  expectMiss("count=2", "equals L['count'] : 1");
  expectMiss("count=1.0", "equals L['count'] : 1");
  expectMiss("scale=0.25", "equals L['scale'] : 0.5");
  expectMiss("scale=torch.tensor(0.5)", "equals L['scale'] : 0.5");
  expectMiss("mode='slow'", "equals L['mode'] : \"fast\"");
  expectMiss("mode=b'fast'", "equals L['mode'] : \"fast\"");
  expectMiss("mask=torch.zeros(1)", "none L['mask']");
  expectMiss("mask=False", "none L['mask']");
  expectMiss("items=[7, 1]", "equals L['items'][-1] : 7");
  expectMiss("items=[]", "equals L['items'][-1] : 7: L['items'][-1] could not be read");
  // `[-1]` is Python's subscript: a dict's entry under the int key -1 (the
  // type and keys guards capture adds tell a dict from a list); a key of
  // another type (True is not 1 here) is another entry.
  expectHit("items={-1: 7}");
  expectMiss("items={1: 7}", "equals L['items'][-1] : 7: L['items'][-1] could not be read");
  expectMiss("items={-1.0: 7}", "equals L['items'][-1] : 7: L['items'][-1] could not be read");
}

TEST_F(GuardEndToEnd, Globals) {
  exec("config['heads'] = 8");
  expectMiss("", "equals G['config']['heads'] : 4");
  exec("config['heads'] = 4");
  expectHit("");
  PyObject* other = PyDict_New();
  Outcome o = run("", {}, other);
  Py_DECREF(other);
  EXPECT_EQ(o.hit, 0);
  EXPECT_EQ(o.reason, "equals G['config']['heads'] : 4: G['config'] could not be read");
}

TEST_F(GuardEndToEnd, UnboundLocal) {
  Outcome o = run("", {1});
  EXPECT_EQ(o.hit, 0);
  EXPECT_EQ(o.reason, std::string(kX) + ": L['x'] could not be read");
  o = run("", {0});
  EXPECT_EQ(o.hit, 0);
  EXPECT_EQ(o.reason, "type L['self'] : model:Model: L['self'] could not be read");
}

TEST_F(GuardEndToEnd, ProcessState) {
  exec("_no_grad = torch.no_grad(); _no_grad.__enter__()");
  expectMiss("", "grad_mode true");
  exec("_no_grad.__exit__(None, None, None)");
  expectHit("");

  // Everything else as float32 still, made before the default changes.
  exec("m = Model(); tensors = dict(x=torch.randn(4, 8), sq=torch.randn(3, 3), "
       "t=torch.randn(4, 8).t())");
  exec("torch.set_default_dtype(torch.float64)");
  expectMiss("self=m, **tensors", "default_dtype f32");
  exec("torch.set_default_dtype(torch.float32)");
  expectHit("");
}

TEST_F(GuardEndToEnd, WithoutPythonReaders) {
  // A table without the Python fields (a host without the Python runtime):
  // the guard misses instead of calling through NULL. Another copy of the
  // library, so its init keeps its own table.
  fs::path copy = dir / "core-only.so";
  fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
  runtime::LoadOptions options;
  options.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
  runtime::LoadResult core = runtime::loadArtifact(copy.string(), options);
  ASSERT_TRUE(core) << core.message;
  Outcome o = run("", {}, nullptr, guardOf(*core.artifact));
  EXPECT_EQ(o.hit, 0);
  EXPECT_EQ(o.reason, "guards of Model.forward: the runtime's shim table has no Python object "
                      "readers (a process without the dync Python runtime)");
}

TEST_F(GuardEndToEnd, InitRefusesAnOlderTable) {
  // A runtime whose table ends before the slots guards read.
  static dync_shim_api old = *fullApi();
  old.size = offsetof(dync_shim_api, grad_mode_enabled);
  fs::path copy = dir / "old-runtime.so";
  fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
  runtime::LoadOptions options;
  options.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
  options.api = &old;
  runtime::LoadResult refused = runtime::loadArtifact(copy.string(), options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error, runtime::LoadErrorKind::InitFailed);
  EXPECT_NE(refused.message.find("the runtime's shim table is older than this artifact"),
            std::string::npos)
      << refused.message;
}

} // namespace
