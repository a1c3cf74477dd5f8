#pragma once

#include "core/outcome.h"

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

/// The exit status one item's status asks for; drift counts only with `fail_on_drift`.
ExitCode exit_code_for(Status status, bool fail_on_drift = false);

/// True when an item's status is a runtime failure or invalid input (exit 1 or 2): the contract
/// asks for a "stockctl: error:" line on standard error besides the item's own line.
bool needs_error_line(Status status);

/// Folds two exit statuses: the most serious wins, in the order 130/143, 1, 2, 5, 4, 3, 6, 0.
ExitCode most_serious(ExitCode a, ExitCode b);

/// Accumulates the exit status of a run, item by item.
class ExitFold {
 public:
  void add(Status status) { code_ = most_serious(code_, exit_code_for(status, fail_on_drift_)); }
  void add(ExitCode code) { code_ = most_serious(code_, code); }
  void set_fail_on_drift(bool on) { fail_on_drift_ = on; }
  ExitCode code() const { return code_; }

 private:
  ExitCode code_ = ExitCode::ok;
  bool fail_on_drift_ = false;
};

}  // namespace stockctl
