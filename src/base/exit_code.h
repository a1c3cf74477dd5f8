#pragma once

namespace stockctl {

/// The contract's exit statuses.
enum class ExitCode : int {
  ok = 0,
  failure = 1,        ///< cannot connect, timeout, Redis error, I/O error
  invalid_input = 2,  ///< usage or invalid input
  insufficient = 3,
  uninitialized = 4,
  busy = 5,
  drift = 6,      ///< rebuild --fail-on-drift found drift
  sigint = 130,   ///< interrupted by SIGINT (128 + 2)
  sigterm = 143,  ///< interrupted by SIGTERM (128 + 15)
};

/// The exit status of a run that `signal` (SIGINT or SIGTERM) interrupted.
ExitCode exit_code_for_signal(int signal);

/// Folds two exit statuses: the most serious wins, in the order 130/143, 1, 2, 5, 4, 3, 6, 0.
ExitCode most_serious(ExitCode a, ExitCode b);

}  // namespace stockctl
