#pragma once

#include <functional>
#include <string>

#include "core/change_log.h"
#include "core/sku.h"
#include "redis/client.h"

namespace stockctl {

/// The Redis the holds code works on, and what shapes its calls: the seam between the holds
/// layer and the program. Commands fill it from their Context; unit tests hand it a client over
/// scripted nodes (tests/unit/fake_node.h).
struct CartStore {
  Client& client;
  KeyScheme scheme;
  ChangeLogSettings log;
};

/// The cluster protocol's one test-only seam: where a test stops it, and how long an attempt
/// may prepare.
struct ProtocolHooks {
  /// Runs after each step ("intent", "prepare:N", "decide", "finish:N", N counting slot groups
  /// from 1); a test stops the protocol there, as a crash would.
  std::function<void(const std::string& step)> after_step;
  /// How long an attempt may take to hold every group before reap may abort it.
  long long prepare_budget_ms = 120000;

  /// Calls after_step, if any, with `step`.
  void after(const std::string& step) const {
    if (after_step) after_step(step);
  }
};

/// The hooks of this process: none, unless a test set STOCKCTL_TEST_STOP_AT=STEP (the process
/// kills itself with SIGKILL right after STEP) or STOCKCTL_TEST_PREPARE_MS=MS (a shorter
/// prepare deadline); CONTRIBUTING.md, "Test-only switches".
ProtocolHooks hooks_from_environment();

}  // namespace stockctl
