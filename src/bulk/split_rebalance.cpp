#include "bulk/split_rebalance.h"

#include <fmt/format.h>

#include "base/backoff.h"
#include "base/text.h"
#include "bulk/split_runner.h"
#include "core/quantity.h"
#include "core/split_plan.h"
#include "redis/scripts/split.h"

namespace stockctl {
namespace {

// How often one rebalance reads the buckets again after buyers emptied a bucket it was moving
// units out of: sales go on, so the buckets are as even as the last read let them be.
constexpr int kRebalanceRounds = 5;

}  // namespace

void SplitRebalance::run(ItemResult& item) {
  even_item(item);
  if (item.moved && *item.moved > 0) log_moves(item);
}

void SplitRebalance::log_moves(const ItemResult& item) {
  log_rebalance_entry(client_, item, *item.moved,
                      item.status == Status::ok ? item.stock : std::nullopt, log_, "",
                      "the rebalance's entry in its change log");
}

void SplitRebalance::even_item(ItemResult& item) {
  Backoff wait(client_.options().retry_timeout_ms, 10, 200, true);
  item.moved = 0;     // counted across the attempts a layout change starts again
  std::string tried;  // the live layout record the last attempt found a bucket gone under
  while (true) {
    std::optional<std::string> stored;
    if (!read_stored_value(client_, item, stored)) return;
    if (!stored || !is_split_record(*stored)) return report_plain(item, stored);
    const std::optional<SplitRecord> layout = parse_split_record(*stored);
    if (!layout) {
      return set_error(item, Status::error,
                       fmt::format("layout record {} of {} cannot be read; nothing changed",
                                   quote_value(*stored), item.key));
    }
    const bool live = layout->state == SplitState::live;
    // The same live layout again (a layout never comes back once replaced): the bucket was
    // deleted or written by hand, and waiting cannot help.
    if (live && *stored == tried) {
      if (std::optional<std::string> problem =
              bad_bucket_problem(client_, item.key, layout->target, item.sku)) {
        return set_error(item, Status::error, *problem);
      }
    }
    if (live && even(item, *stored, layout->target) == Outcome::done) return;
    if (live) tried = *stored;
    // A split or merge under way, or a bucket gone or drained (the layout is being replaced):
    // read the layout again after a pause, up to --retry-timeout.
    if (!wait.pause()) {
      const std::string why =
          live ? "the item's buckets kept changing under this rebalance (a bucket missing, or a "
                 "split or merge running)"
               : fmt::format(
                     "a split or merge of the item is in progress ({}); the same "
                     "stockctl split command finishes it",
                     split_state_name(layout->state));
      if (*item.moved == 0) return set_not_applied(item, why);
      return set_error(item, Status::error,
                       fmt::format("{} ({} units moved before)", why, *item.moved));
    }
  }
}

SplitRebalance::Outcome SplitRebalance::even(ItemResult& item, const std::string& record,
                                             const BucketLayout& layout) {
  // A transfer step that failed may have been applied (a send whose replica did not confirm
  // it): the item is an error saying where the units are, never "not applied".
  std::string error;
  if (!finish_pending_transfers(client_, item.key, layout, error)) {
    set_error(item, Status::error,
              fmt::format("{} ({} units moved before)", error, item.moved.value_or(0)));
    return Outcome::done;
  }
  std::int64_t& moved = *item.moved;
  for (int round = 0; round < kRebalanceRounds; ++round) {
    std::vector<std::int64_t> stocks;
    std::string unread;
    for (const std::optional<std::int64_t>& stock :
         read_bucket_stocks(client_, item.key, layout, &unread)) {
      if (!unread.empty()) {
        set_error(item, Status::error, fmt::format("{} ({} units moved before)", unread, moved));
        return Outcome::done;
      }
      if (!stock) return Outcome::layout_changed;
      stocks.push_back(*stock);
    }
    const std::vector<BucketTransfer> transfers = even_out(stocks);
    if (transfers.empty()) break;
    bool taken = false;
    for (const BucketTransfer& t : transfers) {
      const TransferResult result = move_units(client_, bucket_key(item.key, layout, t.from),
                                               bucket_key(item.key, layout, t.to), t.units, error);
      if (result == TransferResult::layout_changed) return Outcome::layout_changed;
      if (result == TransferResult::failed) {
        set_error(item, Status::error, fmt::format("{} ({} units moved before)", error, moved));
        return Outcome::done;
      }
      if (result == TransferResult::short_at_source) {
        taken = true;  // buyers took them first: plan again from a new read
        break;
      }
      moved += t.units;
    }
    if (!taken) break;
  }
  read_split_item(client_, item, record, ranges_);
  return Outcome::done;
}

void SplitRebalance::report_plain(ItemResult& item, const std::optional<std::string>& stored) {
  item.stock.reset();
  item.moved.reset();  // nothing to move in: set below for a stock value
  if (!stored) {
    item.status = Status::missing;
    return;
  }
  const std::optional<std::int64_t> value = parse_stored_value(*stored);
  if (!value) {
    return set_error(item, Status::error,
                     fmt::format("stored value {} of {} is not a stock value; left unchanged",
                                 quote_value(*stored), item.key));
  }
  // Not split: one key has nothing to even out.
  item.status = *value == kUnlimited ? Status::unlimited : Status::ok;
  if (*value != kUnlimited) item.stock = value;  // null when unlimited, as every command says it
  item.moved = 0;
}

}  // namespace stockctl
