#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/sku.h"

namespace stockctl {

/// One line of a hold or an order: QTY units of one item.
struct HoldLine {
  std::string sku;
  std::int64_t qty = 0;
};

/// The most lines one hold or order may have (before merging).
inline constexpr std::size_t kMaxHoldLines = 1000;

/// The most expired holds (or due carts, per slot) one reap call takes, so that one script run
/// stays short.
inline constexpr int kReapBatch = 200;

/// Parses `SKU=QTY`: the SKU is what stands before the first '='. Returns why `text` is not a
/// line ("" when it is) and fills `line`; the SKU's own validity is checked by validate_sku.
std::string parse_hold_line(std::string_view text, HoldLine& line);

/// Merges the lines that name the same item (their quantities added) and orders the result by
/// SKU, so that the same cart always reaches Redis in the same form. Returns why the lines
/// cannot be merged (a sum past 2^53-1), or "".
std::string merge_hold_lines(std::vector<HoldLine>& lines);

/// Returns why `id` cannot name a hold or an order (empty, over 256 bytes, control
/// characters), or "".
std::string validate_hold_id(std::string_view id);

/// The key of the record of hold or order `id`: outside the items' key space (never taken
/// for an item), in the slot of the id.
std::string hold_record_key(const KeyScheme& scheme, std::string_view id);

/// The key of the index of items that have holds (stock key -> earliest expiry in ms).
std::string holds_index_key(const KeyScheme& scheme);

}  // namespace stockctl
