#include "cli/error_exit.h"

namespace stockctl {

ExitCode exit_code_for(const StockctlError& error) {
  if (dynamic_cast<const InputError*>(&error) != nullptr) return ExitCode::invalid_input;
  if (dynamic_cast<const BusyError*>(&error) != nullptr) return ExitCode::busy;
  if (const auto* stop = dynamic_cast<const InterruptedError*>(&error)) {
    return exit_code_for_signal(stop->signal());
  }
  return ExitCode::failure;
}

}  // namespace stockctl
