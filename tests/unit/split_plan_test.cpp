#include "core/split_plan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <set>

using namespace stockctl;

namespace {

const BucketLayout kFour{"bb", {1, 2, 3, 4}};
const BucketLayout kMerged{};

std::string live(const BucketLayout& layout) {
  return format_split_record({SplitState::live, layout, 0, {}});
}

}  // namespace

TEST_CASE("split plan: a plain value begins a split; merging it is done") {
  CHECK(next_split_step(std::string("10"), kFour).step == SplitStep::begin);
  const SplitDecision merged = next_split_step(std::string("10"), kMerged);
  CHECK(merged.step == SplitStep::done);
  CHECK(merged.status == Status::ok);
}

TEST_CASE("split plan: missing, unlimited and corrupt items are not split") {
  CHECK(next_split_step(std::nullopt, kFour).status == Status::missing);
  const SplitDecision unlimited = next_split_step(std::string("-1"), kFour);
  CHECK(unlimited.step == SplitStep::done);
  CHECK(unlimited.status == Status::unlimited);
  const SplitDecision corrupt = next_split_step(std::string("ten"), kFour);
  CHECK(corrupt.step == SplitStep::done);
  CHECK(corrupt.status == Status::error);
  CHECK(corrupt.message == "stored value 'ten' is not a stock value; left unchanged");
  const SplitDecision bad = next_split_step(std::string("stockctl:split:1 live"), kFour);
  CHECK(bad.status == Status::error);
}

TEST_CASE("split plan: a live layout is done when it has the slots asked, else made again") {
  const std::string record = live({"aa", {1, 2, 3, 4}});
  CHECK(next_split_step(record, kFour).step == SplitStep::done);
  CHECK(next_split_step(record, BucketLayout{"cc", {1, 2, 3, 5}}).step == SplitStep::begin);
  CHECK(next_split_step(record, kMerged).step == SplitStep::begin);
}

TEST_CASE("split plan: a transfer in progress is finished first, whatever is asked") {
  const std::string drain = format_split_record({SplitState::drain, {}, 0, {"aa", {1, 2}}});
  const std::string fill = format_split_record({SplitState::fill, {"aa", {1, 2}}, 10, {}});
  for (const BucketLayout* wanted : {&kFour, &kMerged}) {
    CHECK(next_split_step(drain, *wanted).step == SplitStep::drain);
    const SplitDecision decision = next_split_step(fill, *wanted);
    CHECK(decision.step == SplitStep::fill);
    REQUIRE(decision.record);
    CHECK(decision.record->units == 10);
  }
}

TEST_CASE("home bucket: fixed by the request id, else by the random number") {
  CHECK(home_bucket("order-1", 8, 1) == home_bucket("order-1", 8, 7));
  CHECK(home_bucket("", 8, 13) == 5);
  std::set<int> homes;
  for (int i = 0; i < 100; ++i) homes.insert(home_bucket("id-" + std::to_string(i), 8, 0));
  CHECK(homes.size() == 8);  // ids spread over every bucket
}

TEST_CASE("richest covering: the other bucket with the most stock that covers qty") {
  CHECK(richest_covering({0, 3, 9, 5}, 4, 0) == 2);
  CHECK(richest_covering({9, 3, 1, 5}, 4, 0) == 3);  // never the home bucket itself
  CHECK_FALSE(richest_covering({1, 3, 2, 3}, 4, 0));
}

TEST_CASE("gather moves: fullest first, exactly what home lacks") {
  const std::vector<BucketMove> moves = gather_moves({1, 2, 3, 2}, 0, 5);
  REQUIRE(moves.size() == 2);
  CHECK(moves[0].from == 2);
  CHECK(moves[0].units == 3);
  CHECK(moves[1].from == 1);
  CHECK(moves[1].units == 1);
}

TEST_CASE("gather moves: none when the total is short or home covers qty") {
  CHECK(gather_moves({1, 1, 1}, 0, 4).empty());
  CHECK(gather_moves({5, 1, 1}, 0, 4).empty());
  CHECK(gather_moves({0, 0, 4}, 1, 4).size() == 1);
}

TEST_CASE("a command that does not handle split items says what the item is") {
  CHECK(split_item_refused("export", "A", live({"aa", {1, 2, 3}})) ==
        "item 'A' is split over 3 buckets; export does not handle split items yet, nothing "
        "changed (stockctl split 'A' --buckets 1 merges it back)");
  CHECK(split_item_refused("hold", "A", "stockctl:split:1 fill aa 1,2 4 - -") ==
        "item 'A' is being split or merged (its stock key holds the layout record "
        "'stockctl:split:1 fill aa 1,2 4 - -'); hold does not handle split items, nothing "
        "changed (the same stockctl split command finishes it)");
  // A record that cannot be read is said to be in progress too: never a stock value.
  CHECK(split_item_refused("get", "A", "stockctl:split:1 junk").find("being split") !=
        std::string::npos);
}

TEST_CASE("even out: the fullest bucket gives to the emptiest, each ends with its share") {
  const std::vector<BucketTransfer> transfers = even_out({40, 0, 0, 0});
  REQUIRE(transfers.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(transfers[static_cast<std::size_t>(i)].from == 0);
    CHECK(transfers[static_cast<std::size_t>(i)].to == i + 1);
    CHECK(transfers[static_cast<std::size_t>(i)].units == 10);
  }
  // The remainder stays with the buckets holding the most: nothing moves that need not.
  CHECK(even_out({5, 4}).empty());
  CHECK(even_out({4, 5}).empty());
  CHECK(even_out({0, 0, 0}).empty());
  CHECK(even_out({}).empty());
  const std::vector<BucketTransfer> one = even_out({1, 9, 2});
  REQUIRE(one.size() == 2);
  CHECK((one[0].from == 1 && one[0].to == 0 && one[0].units == 3));
  CHECK((one[1].from == 1 && one[1].to == 2 && one[1].units == 2));
}

TEST_CASE("even out: any stocks end within one unit of each other, the total kept") {
  std::uint64_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = 2 + next() % 63;
    std::vector<std::int64_t> stocks(n);
    for (std::int64_t& stock : stocks) stock = static_cast<std::int64_t>(next() % 50);
    if (trial % 3 == 0) stocks[next() % n] += 100000;  // one hot bucket refilled
    std::vector<std::int64_t> after = stocks;
    const std::vector<BucketTransfer> transfers = even_out(stocks);
    CHECK(transfers.size() <= n - 1);
    for (const BucketTransfer& t : transfers) {
      REQUIRE(t.units > 0);
      REQUIRE(t.from != t.to);
      after[static_cast<std::size_t>(t.from)] -= t.units;
      after[static_cast<std::size_t>(t.to)] += t.units;
      // No bucket gives units it did not hold.
      REQUIRE(after[static_cast<std::size_t>(t.from)] >= 0);
    }
    const auto [low, high] = std::minmax_element(after.begin(), after.end());
    CHECK(*high - *low <= 1);
    CHECK(std::accumulate(after.begin(), after.end(), std::int64_t{0}) ==
          std::accumulate(stocks.begin(), stocks.end(), std::int64_t{0}));
  }
}

TEST_CASE("refused_as_split: only the stock script's refusal of a layout record") {
  const std::string record = "stockctl:split:1 live 9cbf512f 42,12184 - - -";
  CHECK(refused_as_split(split_item_refused("deduct", "A", record), "A"));
  CHECK(refused_as_split(
      split_item_refused("add", "A", "stockctl:split:1 drain 9cbf512f 42,12184 - - -"), "A"));
  CHECK_FALSE(refused_as_split(split_item_refused("deduct", "A", record), "B"));
  CHECK_FALSE(refused_as_split("not applied: authentication failed", "A"));
  CHECK_FALSE(refused_as_split("stored value 'x' of stock:{A} is not a stock value", "A"));
}
