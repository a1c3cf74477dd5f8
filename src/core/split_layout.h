#pragma once

// The key layout of a split item (docs/split.md): the layout record its stock key holds instead
// of a number, the keys of its buckets, and which hash slots the buckets go to.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stockctl {

/// The most buckets an item can be split into.
inline constexpr int kMaxBuckets = 64;

/// The first word of a layout record, and of a drained bucket's record: neither can be read as
/// a number (by Lua's tonumber or by INCRBY), so everything that does not know split items
/// fails on them instead of answering.
inline constexpr std::string_view kSplitRecordWord = "stockctl:split:1";
inline constexpr std::string_view kDrainedRecordWord = "stockctl:drained:1";

/// One layout of a split item: its generation and its buckets' slots (bucket 0 first). No
/// generation and no slots: the item as one key (the target of a merge, the source of a split).
struct BucketLayout {
  std::string gen;
  std::vector<int> slots;

  bool plain() const { return slots.empty(); }
  int buckets() const { return static_cast<int>(slots.size()); }
  bool operator==(const BucketLayout& other) const {
    return gen == other.gen && slots == other.slots;
  }
};

/// Where a split item's units are (docs/split.md, "States of a split or merge").
enum class SplitState {
  live,   ///< in the buckets of `target`
  drain,  ///< in the buckets of `from`, drained or not; going to `target`
  fill,   ///< in the record (`units`); going to `target`, `from`'s drained buckets to delete
};

/// What a split item's stock key holds: "stockctl:split:1 <state> <gen> <tags> <units>
/// <from-gen> <from-tags>", "-" for a word that does not apply. <tags> are the buckets' hash
/// tags, comma separated (each the canonical tag of its slot, slot_tag), so that an
/// application builds the bucket keys from the record alone (docs/library.md).
struct SplitRecord {
  SplitState state = SplitState::live;
  BucketLayout target;
  std::int64_t units = 0;  ///< fill: the units in transfer
  BucketLayout from;
};

/// Whether a stored value is a layout record (well formed or not): stockctl's word for it.
bool is_split_record(std::string_view value);

/// The record `value` holds; nullopt when it is not a well-formed layout record.
std::optional<SplitRecord> parse_split_record(std::string_view value);

/// The text of a layout record, as the split script stores it.
std::string format_split_record(const SplitRecord& record);

/// The <tags> word of a record for buckets in `slots` ("-" for none).
std::string format_bucket_tags(const std::vector<int>& slots);

/// "live", "drain", "fill".
std::string_view split_state_name(SplitState state);

/// A drained bucket: "stockctl:drained:1 <gen> <units>".
struct DrainedBucket {
  std::string gen;
  std::int64_t units = 0;
};

/// The drained bucket `value` holds; nullopt when it is not one.
std::optional<DrainedBucket> parse_drained_bucket(std::string_view value);

/// The key of bucket `index` (from 0) of layout `layout` of the item whose stock key is
/// `stock_key`: "stockctl:bucket:{<tag of its slot>}:<stock key>:<gen>:<index>". The tag
/// comes first, so the bucket lives in its own slot whatever braces the stock key holds.
std::string bucket_key(std::string_view stock_key, const BucketLayout& layout, int index);

/// The moves hash of a bucket (transfers sent from it and received by it; lua/split_bucket-3.lua).
std::string bucket_moves_key(std::string_view bucket_key);

/// A bucket's sold-out hint (docs/split.md, "A sold-out item stays cheap"): the item's total a
/// scan proved below a deduction's QTY, for a second.
std::string bucket_short_key(std::string_view bucket_key);

/// The adds running on a bucket (a sorted set: nonce -> until when, in ms), which keep sold-out
/// hints away while they run (lua/split_bucket-3.lua).
std::string bucket_adds_key(std::string_view bucket_key);

/// The total a sold-out hint holds ("<total> <nonce>"); nullopt for anything else (an add's
/// mark, nothing).
std::optional<std::int64_t> parse_sold_out_hint(std::string_view value);

/// Every bucket key of `layout`, bucket 0 first.
std::vector<std::string> bucket_keys(std::string_view stock_key, const BucketLayout& layout);

/// How `total` units are shared over `buckets` buckets: total / buckets each, one more for the
/// first total % buckets.
std::vector<std::int64_t> bucket_shares(std::int64_t total, int buckets);

/// Reads --buckets (or, named by `what`, a file's buckets column): 1 (merge) to kMaxBuckets.
/// Returns why it cannot be used, or "".
std::string parse_bucket_count(std::string_view text, int& buckets,
                               std::string_view what = "--buckets");

/// A range of hash slots and the primary that serves it ("host:port").
struct SlotRange {
  int first = 0;
  int last = 0;
  std::string node;
};

/// The slots for `buckets` buckets of the item whose stock key is `stock_key`: dealt out over
/// the primaries of `ranges` in turn (sorted by address, starting at an item-dependent one), so
/// each gets buckets / P or one more; inside a primary's slots spread evenly from an
/// item-dependent start. All distinct. An empty `ranges` is one Redis: every slot on one node.
/// Fewer distinct slots than buckets is impossible (16384 slots, at most 64 buckets).
std::vector<int> choose_bucket_slots(const std::vector<SlotRange>& ranges,
                                     std::string_view stock_key, int buckets);

/// The primary serving `slot` in `ranges` ("" when none does, or on one Redis).
std::string node_of_slot(const std::vector<SlotRange>& ranges, int slot);

}  // namespace stockctl
