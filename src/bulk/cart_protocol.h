#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "app/context.h"
#include "base/errors.h"
#include "bulk/hold_runner.h"
#include "core/exit_fold.h"
#include "core/hash_slot.h"

namespace stockctl {

/// A step of the protocol applied on the primary but acknowledged by fewer replicas than
/// --wait-replicas asks for: the run of that cart stops there (a re-run or reap carries it on).
class NotDurableError : public StockctlError {
 public:
  using StockctlError::StockctlError;
};

/// Holds and orders whose lines span several slots of a Redis Cluster: the protocol of
/// docs/holds.md. A record in the id's slot (lua/cart-2.lua) decides; each slot group of the
/// lines is held by hold-4002.lua under its own id (ID#SLOT#ATTEMPT) with an expiry no node
/// ever reaches, so that only the record's decision moves its units (settle-4002.lua).
class CartProtocol {
 public:
  CartProtocol(Context& ctx, CartKind kind, const HoldOptions& o);

  /// Holds or orders one prepared cart: all its lines or none, once per id. A re-run of the
  /// same command resumes (or finishes) whatever an earlier run left.
  void run(Cart& cart);

 private:
  Context& ctx_;
  CartKind kind_;
  const HoldOptions& o_;
};

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

/// The hash slot of `key`, by which a cart's lines are grouped.
int cart_slot(std::string_view key);

/// A SCAN pattern matching the due index of every slot (under the scheme's prefix).
std::string due_index_pattern(const KeyScheme& scheme);

/// The index of items with group holds in `slot` (hold-4002's index for the groups there).
std::string group_index_key(const KeyScheme& scheme, int slot);

/// The test-only crash points (STOCKCTL_TEST_STOP_AT=STEP): the process kills itself with
/// SIGKILL right after `step`, as a crash there would.
void stop_if_asked(const std::string& step);

}  // namespace stockctl
