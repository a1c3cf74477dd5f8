#include "base/exit_code.h"

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

ExitCode exit_code_for_signal(int signal) {
  return signal == SIGTERM ? ExitCode::sigterm : ExitCode::sigint;
}

ExitCode most_serious(ExitCode a, ExitCode b) { return rank(a) >= rank(b) ? a : b; }

}  // namespace stockctl
