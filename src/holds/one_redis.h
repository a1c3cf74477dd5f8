#pragma once

#include <cstdint>
#include <string>

#include "app/context.h"
#include "core/exit_fold.h"

namespace stockctl {

/// confirm, release or cancel of hold or order `id` on one Redis: one settle script. Prints the
/// answer and folds its status; returns the fold's exit status.
ExitCode settle_on_one_redis(Context& ctx, const std::string& action, const std::string& id,
                             ExitFold& fold);

/// What reap did on one Redis.
struct ReapTotal {
  std::int64_t holds = 0;  ///< holds whose units went back
  std::int64_t units = 0;
};

/// reap on one Redis: every expired hold's units back, a batch of items a call.
ReapTotal reap_on_one_redis(Context& ctx);

}  // namespace stockctl
