#include "commands/deduct_add.h"

namespace stockctl {

void setup_add(CLI::App& app, Program& program) {
  setup_op_command(app, program, OpRunner::Op::add, "add",
                   "give QTY units back to an item (restock, refund, cancelled order); a missing "
                   "key is created only from an init source");
}

}  // namespace stockctl
