#pragma once

#include <cstdint>
#include <string>

#include "app/context.h"
#include "core/exit_fold.h"

namespace stockctl {

/// confirm, release or cancel of the cluster hold or order `id`: the record decides, then every
/// group is driven to the decision. Prints the answer and folds its status.
void settle_on_cluster(Context& ctx, const std::string& action, const std::string& id,
                       ExitFold& fold);

/// What reap did on a cluster.
struct ReapCount {
  std::int64_t holds = 0;  ///< holds and orders whose units went back (expired or aborted)
  std::int64_t units = 0;
};

/// reap on a cluster: every record whose time has come (a hold past its expiry, an attempt past
/// its deadline, a decision not yet carried to every group) is decided and finished.
ReapCount reap_on_cluster(Context& ctx);

}  // namespace stockctl
