#pragma once

#include <chrono>
#include <streambuf>
#include <string>

#include "proc/child_process.h"

namespace stockctl {

/// The standard output of a --from-cmd command, as a stream. The command runs with `sh -c` in a
/// process group of its own, with stockctl's environment minus its secrets; its standard error
/// is passed to stockctl's line by line, each line prefixed "from-cmd: ". Output that arrives
/// after `timeout` (counted from the start) is not read: the stream ends and finish() reports
/// the timeout. An interrupt (SIGINT, SIGTERM) ends the stream at once too: the command runs in
/// a group of its own, which a terminal's Ctrl-C does not reach, so stockctl stops it.
class CommandOutput : public std::streambuf {
 public:
  /// Starts the command. Throws std::runtime_error when it cannot be started.
  CommandOutput(const std::string& command, std::chrono::milliseconds timeout);

  /// Reads and drops the rest of the output, waits for the command until the timeout, and stops
  /// whatever is left of its process group. Returns "" when the command exited with status 0,
  /// else what happened ("failed with exit status 3", "killed by signal 9 (Killed)", "still
  /// running after 500 ms (--from-cmd-timeout); its process group was killed"). After an
  /// interrupt it kills the group at once and throws InterruptedError.
  std::string finish();

 protected:
  int_type underflow() override;

 private:
  /// Passes on whatever standard error has now, whole lines at a time.
  void forward_stderr();
  void print_stderr_line(const std::string& line);

  ChildProcess child_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point deadline_;
  bool timed_out_ = false;
  bool interrupted_ = false;  ///< an interrupt ended the stream: the output is not whole
  bool stdout_done_ = false;
  std::string stderr_line_;  ///< a line of standard error not yet complete
  char buf_[1 << 16];
};

}  // namespace stockctl
