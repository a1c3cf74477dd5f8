#include "proc/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace stockctl {
namespace {

// A pollable handle that becomes readable when the process exits (Linux 5.3 and later);
// -1 where the kernel or a sandbox refuses it, and the wait falls back to polling.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Between fork and exec only async-signal-safe calls: everything else was prepared before.
[[noreturn]] void exec_in_child(const char* command, char* const* envp, int out_fd, int err_fd,
                                pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // stockctl killed: the command goes too
  if (getppid() != parent) _exit(127);
  dup2(out_fd, STDOUT_FILENO);
  if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
  const char* argv[] = {"sh", "-c", command, nullptr};
  execve("/bin/sh", const_cast<char* const*>(argv), envp);
  _exit(127);
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

}  // namespace

ChildProcess::ChildProcess(const std::string& command, const std::vector<std::string>& environment,
                           bool pipe_stderr) {
  std::vector<char*> envp;
  envp.reserve(environment.size() + 1);
  for (const std::string& entry : environment) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || (pipe_stderr && pipe2(err, O_CLOEXEC) != 0)) {
    std::string why = std::strerror(errno);
    for (int fd : {out[0], out[1], err[0], err[1]})
      if (fd >= 0) close(fd);
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", why));
  }
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) exec_in_child(command.c_str(), envp.data(), out[1], err[1], parent);
  int fork_errno = errno;
  close(out[1]);
  if (err[1] >= 0) close(err[1]);
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  if (pid_ < 0) {
    close_fd(stdout_fd_);
    close_fd(stderr_fd_);
    throw std::runtime_error(fmt::format("cannot fork: {}", std::strerror(fork_errno)));
  }
  setpgid(pid_, pid_);  // also here, so the group exists before we might kill it
  pidfd_ = open_pidfd(pid_);
}

ChildProcess::~ChildProcess() {
  stop();
  close_fd(stdout_fd_);
  close_fd(stderr_fd_);
  close_fd(pidfd_);
}

void ChildProcess::close_stderr() { close_fd(stderr_fd_); }

bool ChildProcess::wait_exit(std::chrono::steady_clock::time_point deadline,
                             const std::function<void()>& on_stderr,
                             const std::function<bool()>& give_up) {
  using std::chrono::milliseconds;
  for (;;) {
    if (reaped_ || has_exited(pid_)) return true;
    if (give_up && give_up()) return false;
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    // Without a pidfd, look again every 10 ms.
    int wait_ms = pidfd_ >= 0 ? static_cast<int>(left.count())
                              : static_cast<int>(std::min<long long>(left.count(), 10));
    pollfd fds[2] = {{pidfd_, POLLIN, 0}, {on_stderr ? stderr_fd_ : -1, POLLIN, 0}};
    int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) return has_exited(pid_);
    if (fds[1].revents != 0) on_stderr();
  }
}

int ChildProcess::stop() {
  if (reaped_ || pid_ <= 0) return status_;
  // The shell is still unreaped here (a zombie at worst), so the group id cannot be reused yet.
  kill(-pid_, SIGKILL);
  while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status_;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("failed with exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  return fmt::format("wait status {}", status);
}

bool exited_cleanly(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace stockctl
