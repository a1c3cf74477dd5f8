#include "base/interrupt.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "base/errors.h"

namespace stockctl {
namespace {

volatile std::sig_atomic_t g_signal = 0;
int g_lost_output = 0;  // errno of the first failed write to standard output
timespec g_first{};     // when the first signal came; written only by the handler

// A repeat this soon is the same request delivered twice (timeout(1) signals the process and
// then its whole group), not a user insisting.
constexpr long kRepeatNs = 500L * 1000 * 1000;

bool soon_after_first(const timespec& now) {
  const long long ns = static_cast<long long>(now.tv_sec - g_first.tv_sec) * 1000000000LL +
                       (now.tv_nsec - g_first.tv_nsec);
  return ns < kRepeatNs;
}

// Only async-signal-safe calls: clock_gettime, signal, raise.
extern "C" void record_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (g_signal == 0) {
    g_first = now;
    g_signal = sig;
    return;
  }
  if (soon_after_first(now)) return;
  // Asked again: stop at once, the way the signal would have without us.
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// SIGPIPE is caught, not ignored: a write to a pipe whose reader left then fails with EPIPE,
// which the writer reports, and a child process (--init-cmd, --from-cmd) still starts with the
// default, since exec resets a caught signal (an ignored one would be inherited).
extern "C" void ignore_signal(int /*sig*/) {}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);  // one handler at a time
  sigaddset(&action.sa_mask, SIGTERM);
  // SA_RESTART: a read of the source or a sleep resumes instead of failing halfway (a read cut
  // short would look like the end of the file).
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  struct sigaction pipe {};
  pipe.sa_handler = ignore_signal;
  sigemptyset(&pipe.sa_mask);
  pipe.sa_flags = SA_RESTART;
  sigaction(SIGPIPE, &pipe, nullptr);
}

void stop_for_lost_output(int err) {
  if (g_lost_output == 0) g_lost_output = err != 0 ? err : EIO;
}

int lost_output_error() { return g_lost_output; }

int interrupt_signal() { return g_signal; }

void stop_if_interrupted() {
  if (interrupted()) throw InterruptedError(g_signal, interrupt_reason());
}

std::string interrupt_reason() {
  if (g_signal == 0 && g_lost_output != 0) {
    return fmt::format("stopped: standard output could not be written ({})",
                       std::strerror(g_lost_output));
  }
  return g_signal == SIGTERM ? "interrupted by SIGTERM" : "interrupted by SIGINT";
}

}  // namespace stockctl
