#include "core/split_layout.h"

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "core/hash_slot.h"

using namespace stockctl;

namespace {

// A cluster of `nodes` primaries with the slots cut into equal ranges, as redis-cli makes one.
std::vector<SlotRange> even_cluster(int nodes) {
  std::vector<SlotRange> ranges;
  for (int n = 0; n < nodes; ++n) {
    ranges.push_back({n * kClusterSlots / nodes, (n + 1) * kClusterSlots / nodes - 1,
                      "127.0.0.1:" + std::to_string(7000 + n)});
  }
  return ranges;
}

std::map<std::string, int> buckets_per_node(const std::vector<SlotRange>& ranges,
                                            const std::vector<int>& slots) {
  std::map<std::string, int> count;
  for (int slot : slots) ++count[node_of_slot(ranges, slot)];
  return count;
}

}  // namespace

TEST_CASE("split record: a live layout reads back as written") {
  SplitRecord live{SplitState::live, {"5f3a9c", {866, 6257, 11388}}, 0, {}};
  const std::string text = format_split_record(live);
  // The buckets' hash tags, from which an application builds the bucket keys.
  CHECK(text == "stockctl:split:1 live 5f3a9c " + slot_tag(866) + "," + slot_tag(6257) + "," +
                    slot_tag(11388) + " - - -");
  const std::optional<SplitRecord> back = parse_split_record(text);
  REQUIRE(back);
  CHECK(back->state == SplitState::live);
  CHECK(back->target == live.target);
  CHECK(back->from.plain());
}

TEST_CASE("split record: drain and fill carry their source and their units") {
  const std::string one_two = slot_tag(1) + "," + slot_tag(2);
  SplitRecord drain{SplitState::drain, {}, 0, {"aa", {1, 2}}};
  CHECK(format_split_record(drain) == "stockctl:split:1 drain - - - aa " + one_two);
  SplitRecord fill{SplitState::fill, {"bb", {3, 4, 5}}, 17, {"aa", {1, 2}}};
  const std::string text = format_split_record(fill);
  CHECK(text == "stockctl:split:1 fill bb " + format_bucket_tags({3, 4, 5}) + " 17 aa " + one_two);
  const std::optional<SplitRecord> back = parse_split_record(text);
  REQUIRE(back);
  CHECK(back->units == 17);
  CHECK(back->from.gen == "aa");
  CHECK(back->target.buckets() == 3);
  CHECK(back->target.slots == std::vector<int>{3, 4, 5});
}

TEST_CASE("split record: anything not well formed is not read") {
  for (const char* bad : {
           "", "stockctl:split:1", "stockctl:split:1 live aa 1,2 - - - extra",
           "stockctl:split:1 live aa 1 - - -",            // one bucket
           "stockctl:split:1 live aa 1,1 - - -",          // the same slot twice
           "stockctl:split:1 live aa 1,123456789 - - -",  // too long for a slot's tag
           "stockctl:split:1 live AA 1,2 - - -",          // generation not lower-case hex
           "stockctl:split:1 live aa 1,2 5 - -",          // live carries no units
           "stockctl:split:1 fill aa 1,2 - - -",          // fill carries its units
           "stockctl:split:1 fill - - 5 - -",             // from nothing to nothing
           "stockctl:split:1 drain aa 1,2 - - -",         // drain needs a source
           "stockctl:split:1 fill aa 1,2 -5 - -",         // negative units
           "stockctl:split:1 wait aa 1,2 - - -",          // no such state
           "stockctl:split:1 live aa 01,2 - - -",         // not the slot's own tag
       }) {
    CAPTURE(bad);
    CHECK_FALSE(parse_split_record(bad));
  }
}

TEST_CASE("split record: a stock value is not one, and no record reads as a number") {
  CHECK_FALSE(is_split_record("42"));
  CHECK_FALSE(is_split_record("-1"));
  CHECK_FALSE(is_split_record("stockctl:split:10 live"));
  CHECK(is_split_record("stockctl:split:1 whatever"));
  CHECK(is_split_record("stockctl:split:1"));
}

TEST_CASE("drained bucket: reads its generation and units") {
  const std::optional<DrainedBucket> drained = parse_drained_bucket("stockctl:drained:1 aa 12");
  REQUIRE(drained);
  CHECK(drained->gen == "aa");
  CHECK(drained->units == 12);
  CHECK_FALSE(parse_drained_bucket("stockctl:drained:1 aa -1"));
  CHECK_FALSE(parse_drained_bucket("12"));
}

TEST_CASE("bucket keys: in the bucket's slot, naming the item, its layout and its index") {
  const BucketLayout layout{"5f3a9c", {866, 6257}};
  const std::string key = bucket_key("stock:{42}", layout, 1);
  CHECK(key == "stockctl:bucket:{" + slot_tag(6257) + "}:stock:{42}:5f3a9c:1");
  CHECK(key_slot(key) == 6257);
  // Without hash tags the stock key may hold braces of its own: the bucket's tag comes first.
  CHECK(key_slot(bucket_key("redis_key:stock:a{b}c", layout, 0)) == 866);
}

TEST_CASE("bucket keys: two items, two layouts, two buckets never share a key") {
  const BucketLayout a{"aa", {1, 2}};
  const BucketLayout b{"ab", {1, 2}};
  std::set<std::string> keys;
  for (const char* item : {"stock:{1}", "stock:{12}", "stock:{1}2", "stock:{1:aa:0}"}) {
    for (const BucketLayout* layout : {&a, &b}) {
      for (const std::string& key : bucket_keys(item, *layout)) CHECK(keys.insert(key).second);
    }
  }
}

TEST_CASE("bucket shares: add up to the total, differ by at most one") {
  CHECK(bucket_shares(10, 4) == std::vector<std::int64_t>{3, 3, 2, 2});
  CHECK(bucket_shares(0, 3) == std::vector<std::int64_t>{0, 0, 0});
  CHECK(bucket_shares(2, 4) == std::vector<std::int64_t>{1, 1, 0, 0});
}

TEST_CASE("--buckets: 1 to 64, whole numbers only") {
  int buckets = 0;
  CHECK(parse_bucket_count("8", buckets).empty());
  CHECK(buckets == 8);
  CHECK(parse_bucket_count("1", buckets).empty());
  CHECK(parse_bucket_count("64", buckets).empty());
  for (const char* bad : {"0", "65", "abc", "", "-2", "2.5", " 4", "99999999999"}) {
    CAPTURE(bad);
    CHECK(parse_bucket_count(bad, buckets) ==
          std::string("--buckets must be a whole number from 2 to 64 (1 merges the buckets back "
                      "into one key), not '") +
              bad + "'");
  }
}

TEST_CASE("bucket slots: spread evenly over the primaries, all distinct") {
  for (int nodes : {1, 3, 5}) {
    const std::vector<SlotRange> ranges = even_cluster(nodes);
    for (int buckets : {2, 3, 8, 64}) {
      for (const char* item : {"stock:{A}", "stock:{hot}", "redis_key:stock:42"}) {
        const std::vector<int> slots = choose_bucket_slots(ranges, item, buckets);
        CHECK(slots.size() == static_cast<std::size_t>(buckets));
        CHECK(std::set<int>(slots.begin(), slots.end()).size() == slots.size());
        for (const auto& [node, count] : buckets_per_node(ranges, slots)) {
          CAPTURE(node);
          CHECK(count >= buckets / nodes);
          CHECK(count <= buckets / nodes + 1);
        }
        // Every primary has a bucket when there are as many buckets as primaries.
        if (buckets >= nodes) {
          CHECK(buckets_per_node(ranges, slots).size() == static_cast<std::size_t>(nodes));
        }
      }
    }
  }
}

TEST_CASE("bucket slots: the same item and slot map give the same slots; other items others") {
  const std::vector<SlotRange> ranges = even_cluster(3);
  CHECK(choose_bucket_slots(ranges, "stock:{A}", 8) == choose_bucket_slots(ranges, "stock:{A}", 8));
  CHECK(choose_bucket_slots(ranges, "stock:{A}", 8) != choose_bucket_slots(ranges, "stock:{B}", 8));
}

TEST_CASE("bucket slots: an uneven slot map still gives every primary its share") {
  // One primary with a few slots, another with the rest, in two ranges.
  const std::vector<SlotRange> ranges{{0, 2, "a:1"}, {3, 9000, "b:1"}, {9001, 16383, "a:1"}};
  const std::vector<int> slots = choose_bucket_slots(ranges, "stock:{A}", 4);
  CHECK(buckets_per_node(ranges, slots) == std::map<std::string, int>{{"a:1", 2}, {"b:1", 2}});
  // A primary with fewer slots than its buckets: distinct slots all the same.
  const std::vector<SlotRange> tiny{{0, 0, "a:1"}, {1, 16383, "b:1"}};
  const std::vector<int> dealt = choose_bucket_slots(tiny, "stock:{A}", 4);
  CHECK(std::set<int>(dealt.begin(), dealt.end()).size() == 4);
}

TEST_CASE("a sold-out hint is a total and a nonce; an add's word is no hint") {
  CHECK(parse_sold_out_hint("0 3f2a") == std::optional<std::int64_t>(0));
  CHECK(parse_sold_out_hint("12 ab") == std::optional<std::int64_t>(12));
  CHECK_FALSE(parse_sold_out_hint("12"));  // a bare total: no word of its own
  CHECK_FALSE(parse_sold_out_hint("add 3f2a"));
  CHECK_FALSE(parse_sold_out_hint("added 3f2a"));
  CHECK_FALSE(parse_sold_out_hint("-1 ab"));
  CHECK_FALSE(parse_sold_out_hint(" 1 ab"));
  CHECK_FALSE(parse_sold_out_hint(""));
}
