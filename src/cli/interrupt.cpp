#include "cli/interrupt.h"

#include <csignal>

namespace stockctl {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void record_signal(int sig) { g_signal = sig; }

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a read of the source or a sleep resumes instead of failing halfway (a read cut
  // short would look like the end of the file). SA_RESETHAND: a second signal is not caught.
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() { return g_signal; }

std::string interrupt_reason() {
  return g_signal == SIGTERM ? "interrupted by SIGTERM" : "interrupted by SIGINT";
}

}  // namespace stockctl
