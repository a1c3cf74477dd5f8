#include "proc/init_cmd.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "proc/child_env.h"
#include "proc/child_process.h"

#include "base/interrupt.h"

namespace stockctl {
namespace {

// More output than this cannot be one number.
constexpr std::size_t kMaxOutput = 4096;

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

}  // namespace

ParsedNumber run_init_cmd(const std::string& command, const std::string& sku,
                          std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> environment =
      child_environment(current_environment(), {{"STOCKCTL_SKU", sku}});
  std::string out;
  int status = 0;
  try {
    ChildProcess child(command, environment, false);
    const ReadEnd end = read_until(child.stdout_fd(), deadline, out);
    if (end == ReadEnd::interrupted) return {0, "--init-cmd stopped: " + interrupt_reason()};
    // It may close its output and go on running: an interrupt still stops it at once.
    if (end == ReadEnd::timed_out ||
        !child.wait_exit(deadline, nullptr, [] { return interrupted(); })) {
      if (interrupted()) return {0, "--init-cmd stopped: " + interrupt_reason()};
      return {0, "--init-cmd still running when the init lock would expire; it was stopped"};
    }
    status = child.stop();
  } catch (const std::runtime_error& e) {
    return {0, fmt::format("--init-cmd: {}", e.what())};
  }
  if (!exited_cleanly(status)) {
    return {0, fmt::format("--init-cmd {}", describe_wait_status(status))};
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) {
    // `--init-cmd true`, or a query that found no row: say so, not "'' is not a stock value".
    return {0,
            "--init-cmd exited 0 but printed nothing: it must print the item's initial stock "
            "(STOCKCTL_SKU names the item)"};
  }
  ParsedNumber value = parse_stock_value(out);
  if (!value.ok()) return {0, fmt::format("--init-cmd printed {}", value.error)};
  return value;
}

}  // namespace stockctl
