#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "redis/client.h"

namespace stockctl {

/// The read-only call of lua/held_view-3.lua (its header is the contract) that shows an item's
/// logical state: the units in its unexpired holds, and those of holds that expired and were
/// not yet given back, with the stock read in the same moment. get and export pipeline it
/// beside their GET; an item without holds costs what the held call always cost.
Call held_view_call(const std::string& stock_key);

/// What a held_view_call answered.
struct HeldView {
  std::int64_t held = 0;     ///< units in unexpired holds
  std::int64_t expired = 0;  ///< units of expired holds not yet given back
  /// The stock key's value read with them (outer nullopt: not read, use the GET's).
  std::optional<std::optional<std::string>> value;
};

/// The view in `result`; nullopt when it got no answer of the script's shape.
std::optional<HeldView> held_view_from(const CallResult& result);

/// The item's logical value, as a stored value: `stored` (what the GET read, or the view's own
/// read when it made one) with the expired units given back, as the next touch will. A missing
/// key takes them with it, and unlimited and values that are not a stock stay as they are.
std::optional<std::string> logical_value(const std::optional<std::string>& stored,
                                         const HeldView& view);

}  // namespace stockctl
