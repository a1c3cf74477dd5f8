#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace stockctl {

/// A shell command (`/bin/sh -c COMMAND`) running as the leader of a process group of its own,
/// so that stopping it stops everything it started. Its environment is `environment` exactly
/// (build it with child_environment(), which leaves stockctl's secrets out); its standard output
/// and, on request, its standard error are pipes; its standard input is stockctl's. It is killed
/// if stockctl dies first. The destructor kills what is left of the group and reaps the shell.
class ChildProcess {
 public:
  /// Starts the command. Throws std::runtime_error when a pipe or the process cannot be made.
  ChildProcess(const std::string& command, const std::vector<std::string>& environment,
               bool pipe_stderr);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int stdout_fd() const { return stdout_fd_; }
  /// -1 when standard error is not a pipe (or was closed).
  int stderr_fd() const { return stderr_fd_; }
  void close_stderr();

  /// Waits until the shell has exited (without reaping it, so the group id stays reserved while
  /// the rest of the group is killed), at most until `deadline`; false when time ran out. While
  /// waiting, `on_stderr` is called whenever standard error has something to read, and
  /// `give_up` (when given) after every wake-up, a signal's included: true stops the wait at
  /// once (an interrupt), as if time ran out.
  bool wait_exit(std::chrono::steady_clock::time_point deadline,
                 const std::function<void()>& on_stderr = nullptr,
                 const std::function<bool()>& give_up = nullptr);

  /// Kills whatever is left of the process group (SIGKILL) and reaps the shell; returns its
  /// wait status. Safe to call more than once.
  int stop();

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  int pidfd_ = -1;  ///< readable once the shell has exited; -1 when the kernel has no pidfd
  bool reaped_ = false;
  int status_ = 0;
};

/// "failed with exit status 3" or "killed by signal 9 (Killed)", for a wait status that is not
/// success.
std::string describe_wait_status(int status);

/// True when the wait status says the process exited with status 0.
bool exited_cleanly(int status);

}  // namespace stockctl
