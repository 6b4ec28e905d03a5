"""Lets dync's embedded Python modules import one another by name.

The frontend's Python sources are compiled into the binary
(EmbeddedModules.cpp); the C++ half runs this module first and installs its
finder on sys.meta_path with every embedded module's source, so that `import
dync_oracle_wire` in one of them, or a lookup by name from C++, runs that
module as an import statement would, once.

The build also compiles each source (cmake/EmbedPythonCode.py); when the
running interpreter reads that bytecode (the same magic number), the C++ half
passes the marshalled code objects too, and a module runs from its code
object instead of being compiled again: compiling all of them took a third of
a warm capture. The code object is what compile() makes of the same source,
under the same file name and flags.
"""

import importlib.util
import marshal
import sys


class EmbeddedModuleFinder:
    """Finds and runs the embedded modules: {name: source text}, and
    {name: marshalled code object} for those the build compiled."""

    def __init__(self, sources, codes):
        self.sources = sources
        self.codes = codes

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or fullname not in self.sources:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=file_name(fullname))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        module.__file__ = file_name(name)
        compiled = self.codes.get(name) if sys.flags.optimize == 0 else None
        if compiled is not None:
            code = marshal.loads(compiled)
        else:
            code = compile(self.sources[name], module.__file__, "exec", dont_inherit=True)
        exec(code, module.__dict__)


def file_name(module_name):
    """A "<dync ...>" file name marks the module's frames as dync's own,
    which tracebacks shown to the user leave out (PythonError.cpp)."""
    return f"<dync {module_name}>"


def install(sources, codes):
    # First: an embedded module is dync's own, whatever sys.path holds.
    sys.meta_path.insert(0, EmbeddedModuleFinder(sources, codes))
