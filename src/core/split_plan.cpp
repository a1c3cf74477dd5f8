#include "core/split_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "base/text.h"
#include "core/hash_slot.h"
#include "core/quantity.h"

namespace stockctl {

SplitDecision next_split_step(const std::optional<std::string>& stored,
                              const BucketLayout& wanted) {
  SplitDecision decision;
  if (!stored) {
    decision.status = Status::missing;
    return decision;
  }
  if (!is_split_record(*stored)) {
    const std::optional<std::int64_t> value = parse_stored_value(*stored);
    if (!value) {
      decision.status = Status::error;
      decision.message =
          fmt::format("stored value {} is not a stock value; left unchanged", quote_value(*stored));
    } else if (*value == kUnlimited) {
      decision.status = Status::unlimited;  // a deduction never writes it: nothing to spread
    } else if (!wanted.plain()) {
      decision.step = SplitStep::begin;
    }
    return decision;
  }
  decision.record = parse_split_record(*stored);
  if (!decision.record) {
    decision.status = Status::error;
    decision.message =
        fmt::format("layout record {} cannot be read; left unchanged", quote_value(*stored));
    return decision;
  }
  switch (decision.record->state) {
    case SplitState::drain:
      decision.step = SplitStep::drain;
      break;
    case SplitState::fill:
      decision.step = SplitStep::fill;
      break;
    case SplitState::live:
      if (decision.record->target.slots != wanted.slots) decision.step = SplitStep::begin;
      break;
  }
  return decision;
}

int home_bucket(std::string_view request_id, int buckets, std::uint64_t random) {
  if (request_id.empty()) return static_cast<int>(random % static_cast<std::uint64_t>(buckets));
  return crc16(request_id) % buckets;
}

std::optional<int> richest_covering(const std::vector<std::int64_t>& stocks, std::int64_t qty,
                                    int home) {
  std::optional<int> best;
  for (int i = 0; i < static_cast<int>(stocks.size()); ++i) {
    const std::int64_t stock = stocks[static_cast<std::size_t>(i)];
    if (i == home || stock < qty) continue;
    if (!best || stock > stocks[static_cast<std::size_t>(*best)]) best = i;
  }
  return best;
}

std::vector<BucketMove> gather_moves(const std::vector<std::int64_t>& stocks, int home,
                                     std::int64_t qty) {
  const std::int64_t total = std::accumulate(stocks.begin(), stocks.end(), std::int64_t{0});
  std::int64_t missing = qty - stocks.at(static_cast<std::size_t>(home));
  if (total < qty || missing <= 0) return {};
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(stocks.size()); ++i) {
    if (i != home && stocks[static_cast<std::size_t>(i)] > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&stocks](int a, int b) {
    return stocks[static_cast<std::size_t>(a)] > stocks[static_cast<std::size_t>(b)];
  });
  std::vector<BucketMove> moves;
  for (int from : order) {
    const std::int64_t units = std::min(missing, stocks[static_cast<std::size_t>(from)]);
    moves.push_back({from, units});
    missing -= units;
    if (missing == 0) break;
  }
  return moves;
}

std::string split_item_refused(std::string_view op, std::string_view sku, std::string_view stored) {
  const std::optional<SplitRecord> record = parse_split_record(stored);
  if (record && record->state == SplitState::live) {
    return fmt::format(
        "item {} is split over {} buckets; {} does not handle split items yet, nothing changed "
        "(stockctl split {} --buckets 1 merges it back)",
        quote_value(sku), record->target.buckets(), op, quote_value(sku));
  }
  return fmt::format(
      "item {} is being split or merged (its stock key holds the layout record {}); {} does not "
      "handle split items, nothing changed (the same stockctl split command finishes it)",
      quote_value(sku), quote_value(stored), op);
}

}  // namespace stockctl
