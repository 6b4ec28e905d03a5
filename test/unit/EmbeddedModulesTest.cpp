//===- EmbeddedModulesTest.cpp - Python modules compiled into dync --------===//
//
// The frontend's Python sources are compiled into the binary and import one
// another by name, as installed modules would: a plain import statement finds
// an embedded module and runs it once, under a "<dync NAME>" file name that
// tracebacks shown to users leave out; a name dync does not embed is an error
// naming it.
//
//===----------------------------------------------------------------------===//
#include "frontend/oracle/EmbeddedModules.h"
#include "frontend/embedding/PyStrings.h"
#include "test/unit/PythonTestSupport.h"

using dync::python::PyRef;
using namespace dync;

TEST(EmbeddedModulesTest, ImportStatementFindsThem) {
  ASSERT_SUCCEEDED(oracle::importEmbeddedModule("dync__code_identity"));
  test::PythonNamespace ns;
  // Run again by a plain import statement, then put back as it was.
  ASSERT_TRUE(ns.run(R"py(
import inspect
import sys

kept = sys.modules.pop("dync__code_identity")
try:
    import dync__code_identity as fresh
    ran_again = fresh is not kept
    registered = sys.modules["dync__code_identity"] is fresh
    file = fresh.__file__
    frame_files = sorted({
        f.__code__.co_filename for f in vars(fresh).values()
        if inspect.isfunction(f) and f.__module__ == fresh.__name__
    })
    import dync__code_identity as again
    ran_once = again is fresh
finally:
    sys.modules["dync__code_identity"] = kept
try:
    import dync_not_embedded
    unknown = "imported"
except ModuleNotFoundError as error:
    unknown = error.name
)py"));
  EXPECT_EQ(ns.global("ran_again"), Py_True);
  EXPECT_EQ(ns.global("registered"), Py_True);
  EXPECT_EQ(ns.global("ran_once"), Py_True);
  EXPECT_EQ(python::utf8Of(ns.global("file")), "<dync dync__code_identity>");
  EXPECT_EQ(test::stringsOf(ns.global("frame_files")),
            std::vector<std::string>{"<dync dync__code_identity>"});
  EXPECT_EQ(python::utf8Of(ns.global("unknown")), "dync_not_embedded");
}

TEST(EmbeddedModulesTest, UnknownNameIsAnError) {
  test::expectFailure(oracle::importEmbeddedModule("dync_not_embedded"),
                      "dync has no embedded Python module 'dync_not_embedded'");
}

TEST(EmbeddedModulesTest, OracleIsMadeOfItsParts) {
  ASSERT_SUCCEEDED(oracle::importEmbeddedModule("dync_oracle"));
  test::PythonNamespace ns;
  ASSERT_TRUE(ns.run(R"py(
import sys
import types

import dync_oracle
import dync_oracle_symbols

# What the C++ half reads from dync_oracle, wherever it is defined.
missing = [name for name in dync_oracle.__all__ if not hasattr(dync_oracle, name)]
homes = sorted({sys.modules[getattr(dync_oracle, name).__module__].__file__
                for name in dync_oracle.__all__})

# A decision torch took in any of the oracle's frames adds nothing to a
# message; one taken elsewhere, even in another embedded module, is named.
def decided_in(filename):
    frame = types.SimpleNamespace(filename=filename, lineno=3, name="f")
    return dync_oracle_symbols._describe(None, "", types.SimpleNamespace(framework_loc=frame))

in_parts = [decided_in(f"<dync {name}>") for name in ("dync_oracle", "dync_oracle_layout")]
elsewhere = decided_in("<dync dync_fusion_decompositions>")
)py"));
  EXPECT_EQ(test::stringsOf(ns.global("missing")), std::vector<std::string>{});
  EXPECT_EQ(test::stringsOf(ns.global("homes")),
            (std::vector<std::string>{"<dync dync_oracle>", "<dync dync_oracle_calls>",
                                      "<dync dync_oracle_layout>", "<dync dync_oracle_wire>"}));
  EXPECT_EQ(test::stringsOf(ns.global("in_parts")), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(python::utf8Of(ns.global("elsewhere")),
            " (decided in <dync dync_fusion_decompositions>:3 in f)");
}

// The build compiles every embedded module (cmake/EmbedPythonCode.py) and a
// capture runs its code object instead of compiling the source: each must be
// what compile() makes of that source under the module's file name.
TEST(EmbeddedModulesTest, BuildCodeIsTheSourcesCode) {
  ASSERT_SUCCEEDED(oracle::importEmbeddedModule("dync_oracle"));
  test::PythonNamespace ns;
  ASSERT_TRUE(ns.run(R"py(
import marshal
import sys

finder = next(f for f in sys.meta_path if type(f).__name__ == "EmbeddedModuleFinder")
names = sorted(finder.sources)
compiled = sorted(finder.codes)
differ = [name for name in names
          if marshal.loads(finder.codes[name])
          != compile(finder.sources[name], f"<dync {name}>", "exec", dont_inherit=True)]
)py"));
  EXPECT_EQ(test::stringsOf(ns.global("compiled")), test::stringsOf(ns.global("names")));
  EXPECT_EQ(test::stringsOf(ns.global("differ")), std::vector<std::string>{});
}

// A replayed call's view is made by dync_oracle_fake_views.fake_view without
// fake mode's dispatch; it must be the tensor fake mode's as_strided makes:
// a fake tensor of the same mode, device, sizes, strides and offset, a view
// of the same base on the same storage, sharing the base's version counter.
TEST(EmbeddedModulesTest, FakeViewIsFakeModesView) {
  ASSERT_SUCCEEDED(oracle::importEmbeddedModule("dync_oracle_fake_views"));
  test::PythonNamespace ns;
  ASSERT_TRUE(ns.run(R"py(
import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

from dync_oracle_call_canon import fake_empty_strided
from dync_oracle_fake_views import fake_view

fake = FakeTensorMode()
base = fake_empty_strided(fake, (4, 8, 16), (128, 16, 1), torch.float16, torch.device("cpu"))
parent = fake_empty_strided(fake, (64, 8), (8, 1), torch.float32, torch.device("cpu"))
with fake:
    inner = parent[2:10]

def facts(t, b):
    return (type(t).__name__, t.fake_mode is fake, str(t.device), t.dtype, tuple(t.shape),
            t.stride(), t.storage_offset(), t._is_view(), t._base is b,
            t.untyped_storage()._cdata == b.untyped_storage()._cdata, t.requires_grad,
            t.constant is None, t._version == b._version)

mismatches = []
for b, shape, stride, offset in ((base, (4, 8, 2, 8), (128, 16, 8, 1), 0),
                                 (base, (8, 4), (1, 16), 5),
                                 (inner, (3, 4), (8, 2), 1)):
    with fake:
        expected = torch.as_strided(b, shape, stride, offset)
    made = fake_view(fake, b, shape, stride, offset)
    root = b._base if b._is_view() else b
    if facts(made, root) != facts(expected, root):
        mismatches.append(repr((facts(made, root), facts(expected, root))))
    with fake:
        b.add_(1)
    if made._version != expected._version or made._version != b._version:
        mismatches.append(f"version {made._version} {expected._version} {b._version}")
)py"));
  EXPECT_EQ(test::stringsOf(ns.global("mismatches")), std::vector<std::string>{});
}
