#pragma once

#include <string>
#include <vector>

#include "app/program.h"
#include "holds/cart.h"

namespace stockctl {

/// `hold` / `order`: one cart from the words or carts from --file. On one Redis each cart is one
/// script; on a cluster the protocol of docs/holds.md. Prints one answer per cart.
ExitCode run_holds(Program& program, CartKind kind, HoldOptions& o);

/// `confirm`, `release`, `cancel` of each id (`given`, trimmed under --trim). Prints one answer
/// per id.
ExitCode run_settles(Program& program, const std::string& action,
                     const std::vector<std::string>& given);

/// `reap`: gives back the units of every expired hold now (on a cluster also aborts attempts
/// past their deadline and finishes decisions a crash left unfinished).
ExitCode run_reap(Program& program);

}  // namespace stockctl
