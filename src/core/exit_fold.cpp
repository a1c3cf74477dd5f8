#include "core/exit_fold.h"

namespace stockctl {

ExitCode exit_code_for(Status status, bool fail_on_drift) {
  switch (status) {
    case Status::ok:
    case Status::unlimited:
    case Status::exists:
    case Status::extra:  // a finding, not a failure
      return ExitCode::ok;
    case Status::insufficient:
    case Status::expired:  // as the contract counts it
      return ExitCode::insufficient;
    case Status::uninitialized:
    case Status::missing:
      return ExitCode::uninitialized;
    case Status::drift:
      return fail_on_drift ? ExitCode::drift : ExitCode::ok;
    case Status::busy:
      return ExitCode::busy;
    case Status::conflict:
    case Status::invalid:
      return ExitCode::invalid_input;
    case Status::error:
      return ExitCode::failure;
  }
  return ExitCode::failure;
}

bool needs_error_line(Status status) {
  ExitCode code = exit_code_for(status);
  return code == ExitCode::failure || code == ExitCode::invalid_input;
}

}  // namespace stockctl
