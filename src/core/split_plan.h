#pragma once

// The decisions of a split or merge and of a deduction on a split item (docs/split.md): which
// step comes next from what the item's stock key holds, and in which order a deduction tries
// the buckets. Pure: the runners in bulk/split_runner.* and bulk/split_adjust.* take the steps.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/outcome.h"
#include "core/split_layout.h"

namespace stockctl {

/// The next step of `split --buckets N`.
enum class SplitStep {
  done,   ///< nothing (more) to do; the decision's status and message say why
  begin,  ///< start: the plain value or the live layout becomes a transfer to the new layout
  drain,  ///< drain every bucket of the record's `from` layout, then record their sum
  fill,   ///< delete `from`'s drained buckets, create the target's buckets, then commit
};

struct SplitDecision {
  SplitStep step = SplitStep::done;
  Status status = Status::ok;         ///< for done: ok, unlimited, missing or error
  std::string message;                ///< for done with an error
  std::optional<SplitRecord> record;  ///< the record read, when the item is split
};

/// What to do next for an item whose stock key holds `stored` (nullopt: missing), asked to
/// have the buckets of `wanted` (plain: merged into one key). A transfer in progress is
/// finished first, whatever was asked; a live layout with other slots than `wanted`'s is made
/// again (splitting again re-spreads), one with the same slots is done.
SplitDecision next_split_step(const std::optional<std::string>& stored, const BucketLayout& wanted);

/// The bucket a deduction or addition starts at: with a request id, fixed by the id (its
/// ledger is in that bucket, so a repeat finds it); without, `random` spreads the load.
int home_bucket(std::string_view request_id, int buckets, std::uint64_t random);

/// After the home bucket (`home`) was short: the other bucket with the most stock that covers
/// `qty`, from the buckets' stocks as read; nullopt when no single bucket covers it.
std::optional<int> richest_covering(const std::vector<std::int64_t>& stocks, std::int64_t qty,
                                    int home);

/// One move of units between buckets.
struct BucketMove {
  int from = 0;
  std::int64_t units = 0;
};

/// When no single bucket covers `qty` but the buckets together do: what to move into `home`
/// from the others (the fullest first, as few moves as that takes) so that it covers `qty`.
/// Empty when the buckets together hold less than `qty`, or home covers it already.
std::vector<BucketMove> gather_moves(const std::vector<std::int64_t>& stocks, int home,
                                     std::int64_t qty);

/// One transfer of a rebalance: `units` from bucket `from` to bucket `to`.
struct BucketTransfer {
  int from = 0;
  int to = 0;
  std::int64_t units = 0;
};

/// The transfers that even out buckets holding `stocks` (rebalance): each ends with its share
/// of the total, total / N, the remainder one unit each to the buckets holding the most (so
/// that the fewest units move). Each surplus goes to the emptiest buckets first; at most N - 1
/// transfers. Empty when the buckets are even already.
std::vector<BucketTransfer> even_out(const std::vector<std::int64_t>& stocks);

/// The message of a command that does not handle split items yet and met one (`stored` is the
/// layout record it found): what the item is and how to merge it back. `op` names the command.
std::string split_item_refused(std::string_view op, std::string_view sku, std::string_view stored);

/// Whether `error` is split_item_refused's message for the item `sku`: the stock script refused
/// the item because its stock key holds a layout record (and not for any other reason, such as
/// a lost connection, after which nothing is worth reading again).
bool refused_as_split(std::string_view error, std::string_view sku);

}  // namespace stockctl
