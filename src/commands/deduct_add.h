#pragma once

#include "bulk/adjust_runner.h"
#include "commands/program.h"

namespace stockctl {

/// Declares deduct or add: `NAME SKU QTY` or `NAME --file F`, with init sources and locks.
void setup_op_command(CLI::App& app, Program& program, OpRunner::Op op, const std::string& name,
                      const std::string& description);

}  // namespace stockctl
