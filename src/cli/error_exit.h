#pragma once

#include "base/errors.h"
#include "base/exit_code.h"

namespace stockctl {

/// The exit status an error that ended the run asks for: 2 for invalid input, 5 for a busy
/// resource, 130/143 for an interrupted run, 1 for every other failure (connection, Redis, I/O).
ExitCode exit_code_for(const StockctlError& error);

}  // namespace stockctl
