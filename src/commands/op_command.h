#pragma once

#include "commands/program.h"
#include "commands/stock_ops.h"

namespace stockctl {

/// Declares deduct or add: `NAME SKU QTY` or `NAME --file F`, with init sources and locks.
void setup_op_command(CLI::App& app, Program& program, OpRunner::Op op, const std::string& name,
                      const std::string& description);

}  // namespace stockctl
