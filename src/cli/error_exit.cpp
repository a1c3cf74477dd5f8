#include "cli/error_exit.h"

namespace stockctl {

ExitCode exit_code_for(const StockctlError& error) {
  if (dynamic_cast<const InputError*>(&error) != nullptr) return ExitCode::invalid_input;
  if (dynamic_cast<const BusyError*>(&error) != nullptr) return ExitCode::busy;
  if (const auto* stop = dynamic_cast<const InterruptedError*>(&error)) {
    // No signal: standard output was lost (an I/O error).
    return stop->signal() != 0 ? exit_code_for_signal(stop->signal()) : ExitCode::failure;
  }
  return ExitCode::failure;
}

}  // namespace stockctl
