#pragma once

// `rebalance SKU...`: even out a split item's buckets while sales go on, with the transfers of
// docs/split.md ("Moving units between buckets"), each recorded at its source before the units
// leave it, so that a crash or a failover loses and creates none.

#include <string>
#include <vector>

#include "core/change_log.h"
#include "core/outcome.h"
#include "core/split_layout.h"
#include "redis/client.h"

namespace stockctl {

class SplitRebalance {
 public:
  SplitRebalance(Client& client, std::vector<SlotRange> ranges, const ChangeLogSettings& log)
      : client_(client), ranges_(std::move(ranges)), log_(log) {}

  /// Evens out `item`'s buckets (key set): finishes the transfers left under way, then moves
  /// each bucket's surplus to the emptiest ones (core/split_plan.h, even_out). Sets the
  /// status (ok; missing, unlimited or error for an item that is none of split, a stock value),
  /// the stock (the total as read after the moves), the buckets and the units moved. An item
  /// that is not split is ok with nothing moved; one being split or merged waits up to
  /// --retry-timeout, then is not applied. Units moved are logged in the item's change log, one
  /// "rebalance" entry.
  void run(ItemResult& item);

 private:
  enum class Outcome { done, layout_changed };
  void even_item(ItemResult& item);
  /// Logs the units `item` moved; a failure is said on standard error (the moves stand).
  void log_moves(const ItemResult& item);
  Outcome even(ItemResult& item, const std::string& record, const BucketLayout& layout);
  /// The item is not split: its status and stock from the value.
  void report_plain(ItemResult& item, const std::optional<std::string>& stored);

  Client& client_;
  std::vector<SlotRange> ranges_;
  const ChangeLogSettings& log_;
};

}  // namespace stockctl
