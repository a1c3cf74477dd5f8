#include "proc/init_cmd.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/interrupt.h"

namespace stockctl {
namespace {

// More output than this cannot be one number.
constexpr std::size_t kMaxOutput = 4096;

[[noreturn]] void exec_child(const std::string& command, const std::string& sku, int out_fd) {
  setpgid(0, 0);  // its own group, so a timeout kills everything it started
  dup2(out_fd, STDOUT_FILENO);
  close(out_fd);
  setenv("STOCKCTL_SKU", sku.c_str(), 1);
  execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
  _exit(127);
}

enum class ReadEnd { closed, timed_out, interrupted };

// Reads the child's output until it closes, the deadline passes, or a signal asks us to stop
// (poll returns EINTR then, whatever SA_RESTART says).
ReadEnd read_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& out) {
  char buf[512];
  for (;;) {
    if (interrupted()) return ReadEnd::interrupted;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ReadEnd::timed_out;
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return ReadEnd::timed_out;
    if (ready < 0) return ReadEnd::closed;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadEnd::closed;
    if (out.size() < kMaxOutput) out.append(buf, static_cast<std::size_t>(n));
  }
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

ParsedNumber run_init_cmd(const std::string& command, const std::string& sku,
                          std::chrono::steady_clock::time_point deadline) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return {0, fmt::format("--init-cmd: cannot create a pipe: {}", std::strerror(errno))};
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {0, fmt::format("--init-cmd: cannot fork: {}", std::strerror(errno))};
  }
  if (pid == 0) exec_child(command, sku, fds[1]);
  close(fds[1]);
  setpgid(pid, pid);  // also here, so the group exists before we might kill it
  std::string out;
  const ReadEnd end = read_until(fds[0], deadline, out);
  close(fds[0]);
  if (end != ReadEnd::closed) {
    kill(-pid, SIGKILL);
    wait_child(pid);
    if (end == ReadEnd::interrupted) return {0, "--init-cmd stopped: " + interrupt_reason()};
    return {0, "--init-cmd still running when the init lock would expire; it was stopped"};
  }
  int status = wait_child(pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {0, WIFEXITED(status)
                   ? fmt::format("--init-cmd failed with exit status {}", WEXITSTATUS(status))
                   : fmt::format("--init-cmd killed by signal {}", WTERMSIG(status))};
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  ParsedNumber value = parse_stock_value(out);
  if (!value.ok()) return {0, fmt::format("--init-cmd printed {}", value.error)};
  return value;
}

}  // namespace stockctl
