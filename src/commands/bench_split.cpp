#include "commands/bench_split.h"

#include <fmt/format.h>

#include "bulk/split_adjust.h"
#include "bulk/split_runner.h"
#include "core/change_log.h"
#include "redis/errors.h"

namespace stockctl {
namespace {

// The bench writes no change log, as `deduct --no-log`.
const ChangeLogSettings& no_log() {
  static const ChangeLogSettings settings{false, 0, "", ""};
  return settings;
}

ItemResult bench_item(const std::string& key, const char* op) {
  ItemResult item;
  item.op = op;
  item.sku = key;
  item.key = key;
  return item;
}

// Splits or merges the item at `key`; throws when that fails.
void bring_to(Client& client, const std::vector<SlotRange>& ranges, const std::string& key,
              int buckets) {
  SplitRunner runner(client, ranges, no_log());
  ItemResult item = bench_item(key, "split");
  runner.run(item, buckets);
  if (item.status != Status::ok) {
    throw ConnectionError(fmt::format("bench --buckets: {} of {} over {} buckets: {}",
                                      buckets > 1 ? "splitting" : "merging", key, buckets,
                                      item.error));
  }
}

}  // namespace

BenchSplitItem::BenchSplitItem(Client& client, bool cluster, std::string key, int buckets)
    : key_(std::move(key)), ranges_(read_slot_ranges(client, cluster)) {
  bring_to(client, ranges_, key_, buckets);
  const Reply stored = client.call(Call::read({"GET", key_}));
  const std::optional<std::string> record = stored.string_or_nil();
  const std::optional<SplitRecord> layout =
      record ? parse_split_record(*record) : std::optional<SplitRecord>();
  if (!layout || layout->state != SplitState::live) {
    throw ConnectionError(
        fmt::format("bench --buckets: {} holds no live layout after the split", key_));
  }
  record_ = *record;
  buckets_ = bucket_keys(key_, layout->target);
}

const std::string& BenchSplitItem::bucket(int connection) const {
  return buckets_[static_cast<std::size_t>(connection) % buckets_.size()];
}

ItemResult BenchSplitItem::deduct_from_the_others(Client& client) const {
  ItemResult item = bench_item(key_, "deduct");
  item.qty = 1;
  const OpOptions options;
  SplitAdjust adjust(client, OpRunner::Op::deduct, options, no_log());
  adjust.run(item, record_);
  return item;
}

std::optional<long long> BenchSplitItem::remaining(Client& client) const {
  const std::optional<SplitRecord> layout = parse_split_record(record_);
  std::string error;
  if (!finish_pending_transfers(client, key_, layout->target, error)) return std::nullopt;
  long long units = 0;
  for (const std::optional<std::int64_t>& stock :
       read_bucket_stocks(client, key_, layout->target)) {
    if (!stock) return std::nullopt;
    units += *stock;
  }
  return units;
}

void BenchSplitItem::merge(Client& client) { bring_to(client, ranges_, key_, 1); }

}  // namespace stockctl
