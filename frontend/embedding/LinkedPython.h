//===- LinkedPython.h - Where the libpython dync is linked with lives -----===//
#pragma once

#include <optional>
#include <string>

namespace dync::python {

/// The installation prefix of the libpython this process is linked with
/// (the directory holding lib/pythonX.Y/os.py), found from the shared
/// library's own path. Nothing if libpython is linked statically or its
/// standard library is not next to it.
std::optional<std::string> linkedInstallationPrefix();

} // namespace dync::python
