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

namespace {

// Each bucket's share of `stocks`' total: the quotient, and one unit more for as many buckets
// as the remainder, those holding the most first (ties: the lower index).
std::vector<std::int64_t> even_shares(const std::vector<std::int64_t>& stocks) {
  const auto n = static_cast<std::int64_t>(stocks.size());
  const std::int64_t total = std::accumulate(stocks.begin(), stocks.end(), std::int64_t{0});
  std::vector<std::int64_t> shares(stocks.size(), total / n);
  std::vector<std::size_t> fullest(stocks.size());
  std::iota(fullest.begin(), fullest.end(), std::size_t{0});
  std::stable_sort(fullest.begin(), fullest.end(),
                   [&stocks](std::size_t a, std::size_t b) { return stocks[a] > stocks[b]; });
  for (std::int64_t i = 0; i < total % n; ++i) ++shares[fullest[static_cast<std::size_t>(i)]];
  return shares;
}

}  // namespace

std::vector<BucketTransfer> even_out(const std::vector<std::int64_t>& stocks) {
  if (stocks.empty()) return {};
  const std::vector<std::int64_t> shares = even_shares(stocks);
  // Surplus (positive) and need (negative) of each bucket; the emptiest receive first.
  std::vector<std::int64_t> excess(stocks.size());
  std::vector<int> givers;
  std::vector<int> takers;
  for (std::size_t i = 0; i < stocks.size(); ++i) {
    excess[i] = stocks[i] - shares[i];
    if (excess[i] > 0) givers.push_back(static_cast<int>(i));
    if (excess[i] < 0) takers.push_back(static_cast<int>(i));
  }
  auto by_excess = [&excess](int a, int b) {
    return excess[static_cast<std::size_t>(a)] < excess[static_cast<std::size_t>(b)];
  };
  std::stable_sort(takers.begin(), takers.end(), by_excess);
  std::stable_sort(givers.rbegin(), givers.rend(), by_excess);
  std::vector<BucketTransfer> transfers;
  std::size_t g = 0;
  for (int to : takers) {
    std::int64_t need = -excess[static_cast<std::size_t>(to)];
    while (need > 0 && g < givers.size()) {
      std::int64_t& surplus = excess[static_cast<std::size_t>(givers[g])];
      const std::int64_t units = std::min(need, surplus);
      transfers.push_back({givers[g], to, units});
      need -= units;
      surplus -= units;
      if (surplus == 0) ++g;
    }
  }
  return transfers;
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

bool refused_as_split(std::string_view error, std::string_view sku) {
  const std::string head = fmt::format("item {} is ", quote_value(sku));
  return error.substr(0, head.size()) == head &&
         error.find("does not handle split items") != std::string_view::npos;
}

}  // namespace stockctl
