#include "proc/from_cmd.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/errors.h"
#include "base/interrupt.h"
#include "proc/child_env.h"

namespace stockctl {
namespace {

// A line of standard error longer than this is passed on in pieces.
constexpr std::size_t kMaxStderrLine = 1 << 16;

}  // namespace

CommandOutput::CommandOutput(const std::string& command, std::chrono::milliseconds timeout)
    : child_(command, child_environment(current_environment()), true),
      timeout_(timeout),
      deadline_(std::chrono::steady_clock::now() + timeout) {}

CommandOutput::int_type CommandOutput::underflow() {
  while (!stdout_done_) {
    // A signal's handler makes poll return EINTR; one that came while the parser worked is
    // seen here before the next wait.
    if (interrupted()) {
      interrupted_ = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out_ = true;
      break;
    }
    pollfd fds[2] = {{child_.stdout_fd(), POLLIN, 0}, {child_.stderr_fd(), POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) forward_stderr();
    if (fds[0].revents == 0) continue;
    ssize_t n = read(child_.stdout_fd(), buf_, sizeof buf_);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }
  stdout_done_ = true;
  return traits_type::eof();
}

std::string CommandOutput::finish() {
  while (underflow() != traits_type::eof()) setg(buf_, buf_, buf_);  // what the parser left
  // A command may close its output and go on running: an interrupt still stops it at once.
  auto interrupt_seen = [this] { return interrupted_ = interrupted_ || interrupted(); };
  bool exited = !timed_out_ && !interrupt_seen() &&
                child_.wait_exit(
                    deadline_, [this] { forward_stderr(); }, interrupt_seen);
  // Output still open at the deadline after the shell itself had exited: a process it left
  // running (`cmd &`) holds the pipe, and what it might still write is not known.
  const bool shell_exited =
      !exited && !interrupted_ && child_.wait_exit(std::chrono::steady_clock::now());
  int status = child_.stop();
  // What the group wrote before it ended is still in the pipe; nobody is left to write more.
  if (child_.stderr_fd() >= 0) {
    fcntl(child_.stderr_fd(), F_SETFL, O_NONBLOCK);
    forward_stderr();
  }
  if (!stderr_line_.empty()) print_stderr_line(stderr_line_);
  stderr_line_.clear();
  if (interrupted_) {
    throw InterruptedError(interrupt_signal(),
                           fmt::format("{} while --from-cmd ran; its process group was killed and "
                                       "nothing was written",
                                       interrupt_reason()));
  }
  if (!exited && shell_exited) {
    return fmt::format(
        "{}, but a process it left running kept its output open until --from-cmd-timeout ({} "
        "ms); its process group was killed",
        exited_cleanly(status) ? "exited with status 0" : describe_wait_status(status),
        timeout_.count());
  }
  if (!exited) {
    return fmt::format(
        "still running after {} ms (--from-cmd-timeout); its process group was killed",
        timeout_.count());
  }
  return exited_cleanly(status) ? std::string() : describe_wait_status(status);
}

void CommandOutput::forward_stderr() {
  char chunk[4096];
  for (;;) {
    ssize_t n = read(child_.stderr_fd(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) child_.close_stderr();
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; ++i) {
      if (chunk[i] == '\n' || stderr_line_.size() >= kMaxStderrLine) {
        print_stderr_line(stderr_line_);
        stderr_line_.clear();
        if (chunk[i] == '\n') continue;
      }
      stderr_line_ += chunk[i];
    }
    // Blocking reads take one chunk per call: poll says when there is more.
    if ((fcntl(child_.stderr_fd(), F_GETFL) & O_NONBLOCK) == 0) return;
  }
}

void CommandOutput::print_stderr_line(const std::string& line) {
  std::string out = "from-cmd: ";
  out += line;
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace stockctl
