#pragma once

// `stockctl bench --buckets N`: the hot item split over N buckets (docs/split.md) for the run,
// each connection deducting from one bucket (connection c from bucket c mod N), straight on that
// bucket's node, as an application with the layout cached spreads its buyers.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/outcome.h"
#include "core/split_layout.h"
#include "redis/client.h"

namespace stockctl {

/// The bench's hot item while it is split: split when made, merged back by merge().
class BenchSplitItem {
 public:
  /// Splits the item at `key` over `buckets` buckets; throws ConnectionError when it cannot.
  BenchSplitItem(Client& client, bool cluster, std::string key, int buckets);

  /// Bucket `connection` modulo their number: a connection's home bucket.
  const std::string& bucket(int connection) const;

  /// One unit off the item as `deduct` takes it once the bucket it tried was short: from the
  /// other buckets, moving units when no single one covers it, insufficient only when the
  /// item is (docs/split.md). Sets the item's status.
  ItemResult deduct_from_the_others(Client& client) const;

  /// The units in the buckets once the transfers left under way are finished; nullopt when a
  /// bucket is gone or holds something else.
  std::optional<long long> remaining(Client& client) const;

  /// Merges the item back into its stock key (which the bench then deletes); throws
  /// ConnectionError when it cannot.
  void merge(Client& client);

 private:
  std::string key_;
  std::string record_;
  std::vector<std::string> buckets_;
  std::vector<SlotRange> ranges_;
};

}  // namespace stockctl
