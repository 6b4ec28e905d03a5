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
