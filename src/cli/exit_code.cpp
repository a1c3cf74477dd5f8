#include "cli/exit_code.h"

#include <csignal>

namespace stockctl {
namespace {

int rank(ExitCode code) {
  switch (code) {
    case ExitCode::sigint:
    case ExitCode::sigterm:
      return 7;
    case ExitCode::failure:
      return 6;
    case ExitCode::invalid_input:
      return 5;
    case ExitCode::busy:
      return 4;
    case ExitCode::uninitialized:
      return 3;
    case ExitCode::insufficient:
      return 2;
    case ExitCode::drift:
      return 1;
    case ExitCode::ok:
      return 0;
  }
  return 6;
}

}  // namespace

ExitCode exit_code_for(Status status, bool fail_on_drift) {
  switch (status) {
    case Status::ok:
    case Status::unlimited:
    case Status::exists:
    case Status::extra:  // a finding, not a failure
      return ExitCode::ok;
    case Status::insufficient:
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

ExitCode exit_code_for_signal(int signal) {
  return signal == SIGTERM ? ExitCode::sigterm : ExitCode::sigint;
}

ExitCode most_serious(ExitCode a, ExitCode b) { return rank(a) >= rank(b) ? a : b; }

}  // namespace stockctl
