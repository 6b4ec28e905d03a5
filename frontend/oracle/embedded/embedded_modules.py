"""Lets dync's embedded Python modules import one another by name.

The frontend's Python sources are compiled into the binary
(EmbeddedModules.cpp); the C++ half runs this module first, from its source,
and installs its finder on sys.meta_path with every embedded module's source,
so that `import dync_oracle_wire` in one of them, or a lookup by name from
C++, runs that module as an import statement would, once.
"""

import importlib.util
import sys


class EmbeddedModuleFinder:
    """Finds and runs the embedded modules: {name: source text}."""

    def __init__(self, sources):
        self.sources = sources

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or fullname not in self.sources:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=file_name(fullname))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        module.__file__ = file_name(name)
        code = compile(self.sources[name], module.__file__, "exec", dont_inherit=True)
        exec(code, module.__dict__)


def file_name(module_name):
    """A "<dync ...>" file name marks the module's frames as dync's own,
    which tracebacks shown to the user leave out (PythonError.cpp)."""
    return f"<dync {module_name}>"


def install(sources):
    # First: an embedded module is dync's own, whatever sys.path holds.
    sys.meta_path.insert(0, EmbeddedModuleFinder(sources))
