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
