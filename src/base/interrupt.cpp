#include "base/interrupt.h"

#include <csignal>
#include <ctime>

#include "base/errors.h"

namespace stockctl {
namespace {

volatile std::sig_atomic_t g_signal = 0;
timespec g_first{};  // when the first signal came; written only by the handler

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
}

int interrupt_signal() { return g_signal; }

void stop_if_interrupted() {
  if (interrupted()) throw InterruptedError(g_signal, interrupt_reason());
}

std::string interrupt_reason() {
  return g_signal == SIGTERM ? "interrupted by SIGTERM" : "interrupted by SIGINT";
}

}  // namespace stockctl
