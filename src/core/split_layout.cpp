#include "core/split_layout.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/text.h"
#include "core/hash_slot.h"
#include "core/quantity.h"

namespace stockctl {
namespace {

constexpr std::string_view kNone = "-";

std::vector<std::string_view> words_of(std::string_view text, char separator) {
  std::vector<std::string_view> words;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    words.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return words;
    start = end + 1;
  }
}

// A generation: 1 to 16 lower-case hex digits (stockctl makes 8 at random).
bool valid_gen(std::string_view gen) {
  return !gen.empty() && gen.size() <= 16 && std::all_of(gen.begin(), gen.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// A bucket's hash tag in a record: the canonical tag of its slot (slot_tag), which names it.
std::optional<int> slot_named_by_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 8) return std::nullopt;
  const int slot = key_slot(tag);
  if (slot_tag(slot) != tag) return std::nullopt;
  return slot;
}

// "<gen> <tags>" of a record: both "-" (no layout), or a generation and the hash tags of 2 to
// kMaxBuckets buckets in distinct slots.
std::optional<BucketLayout> parse_layout(std::string_view gen, std::string_view tags) {
  if (gen == kNone && tags == kNone) return BucketLayout{};
  if (!valid_gen(gen) || tags == kNone) return std::nullopt;
  BucketLayout layout{std::string(gen), {}};
  for (std::string_view word : words_of(tags, ',')) {
    const std::optional<int> slot = slot_named_by_tag(word);
    if (!slot) return std::nullopt;
    layout.slots.push_back(*slot);
  }
  const std::set<int> distinct(layout.slots.begin(), layout.slots.end());
  if (layout.slots.size() < 2 || layout.slots.size() > kMaxBuckets ||
      distinct.size() != layout.slots.size()) {
    return std::nullopt;
  }
  return layout;
}

}  // namespace

std::string format_bucket_tags(const std::vector<int>& slots) {
  if (slots.empty()) return std::string(kNone);
  std::string text;
  for (int slot : slots) {
    if (!text.empty()) text += ',';
    text += slot_tag(slot);
  }
  return text;
}

namespace {

std::optional<SplitState> parse_state(std::string_view word) {
  if (word == "live") return SplitState::live;
  if (word == "drain") return SplitState::drain;
  if (word == "fill") return SplitState::fill;
  return std::nullopt;
}

// Whether the words that a state uses are there and the others are "-".
bool consistent(const SplitRecord& record, bool has_units) {
  switch (record.state) {
    case SplitState::live:
      return !record.target.plain() && !has_units && record.from.plain();
    case SplitState::drain:
      return !record.from.plain() && !has_units;
    case SplitState::fill:
      return has_units && !(record.target.plain() && record.from.plain());
  }
  return false;
}

// The first of `slots` not yet `taken`, or the first slot when every one is.
int first_free(const std::vector<int>& slots, const std::set<int>& taken) {
  for (int slot : slots) {
    if (taken.count(slot) == 0) return slot;
  }
  return slots.front();
}

}  // namespace

bool is_split_record(std::string_view value) {
  return starts_with(value, kSplitRecordWord) &&
         (value.size() == kSplitRecordWord.size() || value[kSplitRecordWord.size()] == ' ');
}

std::optional<SplitRecord> parse_split_record(std::string_view value) {
  const std::vector<std::string_view> words = words_of(value, ' ');
  if (words.size() != 7 || words[0] != kSplitRecordWord) return std::nullopt;
  const std::optional<SplitState> state = parse_state(words[1]);
  const std::optional<BucketLayout> target = parse_layout(words[2], words[3]);
  const std::optional<BucketLayout> from = parse_layout(words[5], words[6]);
  if (!state || !target || !from) return std::nullopt;
  SplitRecord record{*state, *target, 0, *from};
  const bool has_units = words[4] != kNone;
  if (has_units) {
    const std::optional<std::int64_t> units = parse_stored_value(std::string(words[4]));
    if (!units || *units < 0) return std::nullopt;
    record.units = *units;
  }
  if (!consistent(record, has_units)) return std::nullopt;
  return record;
}

std::string format_split_record(const SplitRecord& record) {
  auto gen_word = [](const BucketLayout& layout) {
    return layout.plain() ? std::string(kNone) : layout.gen;
  };
  std::string text(kSplitRecordWord);
  for (const std::string& word :
       {std::string(split_state_name(record.state)), gen_word(record.target),
        format_bucket_tags(record.target.slots),
        record.state == SplitState::fill ? std::to_string(record.units) : std::string(kNone),
        gen_word(record.from), format_bucket_tags(record.from.slots)}) {
    text += ' ';
    text += word;
  }
  return text;
}

std::string_view split_state_name(SplitState state) {
  switch (state) {
    case SplitState::live:
      return "live";
    case SplitState::drain:
      return "drain";
    case SplitState::fill:
      return "fill";
  }
  return "live";
}

std::optional<DrainedBucket> parse_drained_bucket(std::string_view value) {
  const std::vector<std::string_view> words = words_of(value, ' ');
  if (words.size() != 3 || words[0] != kDrainedRecordWord || !valid_gen(words[1])) {
    return std::nullopt;
  }
  const std::optional<std::int64_t> units = parse_stored_value(std::string(words[2]));
  if (!units || *units < 0) return std::nullopt;
  return DrainedBucket{std::string(words[1]), *units};
}

std::string bucket_key(std::string_view stock_key, const BucketLayout& layout, int index) {
  const std::string& tag = slot_tag(layout.slots.at(static_cast<std::size_t>(index)));
  std::string key;
  key.reserve(20 + tag.size() + stock_key.size() + layout.gen.size());
  key += "stockctl:bucket:{";
  key += tag;
  key += "}:";
  key += stock_key;
  key += ':';
  key += layout.gen;
  key += ':';
  key += std::to_string(index);
  return key;
}

std::string bucket_moves_key(std::string_view bucket_key) {
  std::string key(bucket_key);
  key += ":moves";  // the bucket key carries its own tag: the same slot
  return key;
}

std::string bucket_short_key(std::string_view bucket_key) {
  std::string key(bucket_key);
  key += ":short";
  return key;
}

std::string bucket_adds_key(std::string_view bucket_key) {
  std::string key(bucket_key);
  key += ":adds";
  return key;
}

std::optional<std::int64_t> parse_sold_out_hint(std::string_view value) {
  const std::size_t space = value.find(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  const std::optional<std::int64_t> total = parse_stored_value(value.substr(0, space));
  if (!total || *total < 0) return std::nullopt;
  return total;
}

std::vector<std::string> bucket_keys(std::string_view stock_key, const BucketLayout& layout) {
  std::vector<std::string> keys;
  keys.reserve(layout.slots.size());
  for (int i = 0; i < layout.buckets(); ++i) keys.push_back(bucket_key(stock_key, layout, i));
  return keys;
}

std::vector<std::int64_t> bucket_shares(std::int64_t total, int buckets) {
  std::vector<std::int64_t> shares(static_cast<std::size_t>(buckets), total / buckets);
  for (std::int64_t i = 0; i < total % buckets; ++i) ++shares[static_cast<std::size_t>(i)];
  return shares;
}

std::string parse_bucket_count(std::string_view text, int& buckets, std::string_view what) {
  const std::string_view digits = text;
  const bool numeric =
      !digits.empty() && digits.size() <= 9 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  const long value = numeric ? std::stol(std::string(digits)) : -1;
  if (value < 1 || value > kMaxBuckets) {
    return std::string(what) +
           " must be a whole number from 2 to 64 (1 merges the buckets back into one key), not " +
           quote_value(text);
  }
  buckets = static_cast<int>(value);
  return {};
}

std::vector<int> choose_bucket_slots(const std::vector<SlotRange>& ranges,
                                     std::string_view stock_key, int buckets) {
  // Each primary's slots, in order; one Redis has them all.
  std::map<std::string, std::vector<int>> slots_of;
  for (const SlotRange& range : ranges) {
    std::vector<int>& slots = slots_of[range.node];
    for (int slot = range.first; slot <= range.last; ++slot) slots.push_back(slot);
  }
  if (slots_of.empty()) {
    std::vector<int>& all = slots_of[""];
    for (int slot = 0; slot < kClusterSlots; ++slot) all.push_back(slot);
  }
  std::vector<const std::vector<int>*> nodes;
  nodes.reserve(slots_of.size());
  for (const auto& entry : slots_of) nodes.push_back(&entry.second);
  for (auto& slots : slots_of) std::sort(slots.second.begin(), slots.second.end());

  const auto item = static_cast<std::size_t>(key_slot(stock_key));
  const std::size_t count = nodes.size();
  // How many buckets each primary gets: dealt out in turn from an item-dependent primary.
  std::vector<std::size_t> dealt(count, 0);
  for (int i = 0; i < buckets; ++i) ++dealt[(item + static_cast<std::size_t>(i)) % count];

  std::vector<int> chosen;
  std::set<int> taken;
  std::vector<std::size_t> next(count, 0);
  for (int i = 0; i < buckets; ++i) {
    const std::size_t node = (item + static_cast<std::size_t>(i)) % count;
    const std::vector<int>& slots = *nodes[node];
    const std::size_t step = std::max<std::size_t>(1, slots.size() / dealt[node]);
    std::size_t at = (item + next[node]++ * step) % slots.size();
    // A primary with fewer slots than its buckets: its next free slot, else another's.
    for (std::size_t tried = 0; taken.count(slots[at]) != 0 && tried < slots.size(); ++tried) {
      at = (at + 1) % slots.size();
    }
    int slot = slots[at];
    for (std::size_t other = 1; taken.count(slot) != 0 && other < count; ++other) {
      slot = first_free(*nodes[(node + other) % count], taken);
    }
    taken.insert(slot);
    chosen.push_back(slot);
  }
  return chosen;
}

std::string node_of_slot(const std::vector<SlotRange>& ranges, int slot) {
  for (const SlotRange& range : ranges) {
    if (slot >= range.first && slot <= range.last) return range.node;
  }
  return {};
}

}  // namespace stockctl
