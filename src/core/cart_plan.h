#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stockctl {

/// The lines of one slot group of a cluster hold or order: indexes into the cart's lines.
struct SlotGroup {
  int slot = 0;
  std::vector<std::size_t> lines;
};

/// Groups the lines by the slot of each (`slots[i]`: line i's slot), ordered by slot, each
/// group's lines in the cart's order: the same cart always makes the same groups.
std::vector<SlotGroup> group_by_slot(const std::vector<int>& slots);

/// The id of a group's hold: `ID#SLOT#ATTEMPT`. Distinct (id, slot, attempt) give distinct ids
/// (the two fields after the id are digits, so the id is what stands before the last two '#').
std::string group_hold_id(std::string_view id, int slot, std::int64_t attempt);

/// The canonical text of a cart for the record's replay check: the kind, then one
/// "KEY<TAB>QTY" per line, sorted (the same lines in any order give the same text).
std::string cart_canon(std::string_view kind, const std::vector<std::string>& keys,
                       const std::vector<std::int64_t>& qtys);

}  // namespace stockctl
