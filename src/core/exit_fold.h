#pragma once

#include "base/exit_code.h"
#include "core/outcome.h"

namespace stockctl {

/// The exit status one item's status asks for; drift counts only with `fail_on_drift`.
ExitCode exit_code_for(Status status, bool fail_on_drift = false);

/// True when an item's status is a runtime failure or invalid input (exit 1 or 2): the contract
/// asks for a "stockctl: error:" line on standard error besides the item's own line.
bool needs_error_line(Status status);

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
