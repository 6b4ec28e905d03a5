//===- ExportCommand.h - `dync export ENTRY...` ---------------------------===//
#pragma once

#include "driver/Command.h"

#include <memory>

namespace dync::driver {

/// `dync export FILE.py:QUALNAME... --emit=graph|guards|signature`.
std::unique_ptr<Command> createExportCommand();

} // namespace dync::driver
