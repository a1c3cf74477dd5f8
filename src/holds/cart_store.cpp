// The test-only switches of the cluster protocol, read in this one place.

#include "holds/cart_store.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace stockctl {

ProtocolHooks hooks_from_environment() {
  ProtocolHooks hooks;
  if (const char* stop_at = std::getenv("STOCKCTL_TEST_STOP_AT")) {
    hooks.after_step = [step_to_stop = std::string(stop_at)](const std::string& step) {
      if (step == step_to_stop) ::kill(::getpid(), SIGKILL);
    };
  }
  if (const char* ms = std::getenv("STOCKCTL_TEST_PREPARE_MS")) {
    hooks.prepare_budget_ms = std::atoll(ms);
  }
  return hooks;
}

}  // namespace stockctl
