#include "commands/deduct_add.h"

namespace stockctl {

void setup_deduct(CLI::App& app, Program& program) {
  setup_op_command(app, program, OpRunner::Op::deduct, "deduct",
                   "atomically take QTY units of an item; never below zero");
}

}  // namespace stockctl
