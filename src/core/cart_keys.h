#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/cart_plan.h"
#include "core/sku.h"

namespace stockctl {

// The keys of the cluster protocol of docs/holds.md ("Keys"). Each one carries the hash tag of
// the slot it must live in: the record in its id's slot, a group's record and index and a
// slot's due index in that slot.

/// The hash slot of `key`, by which a cart's lines are grouped.
int cart_slot(std::string_view key);

/// The record of cluster hold or order `id`, in the id's slot (with the scheme's hash tag, the
/// id is the tag).
std::string cart_record_key(const KeyScheme& scheme, std::string_view id);

/// The due index of `slot`: the ids of the records there whose deadline or expiry reap must
/// look at.
std::string due_key(const KeyScheme& scheme, int slot);

/// A SCAN pattern matching the due index of every slot (under the scheme's prefix).
std::string due_index_pattern(const KeyScheme& scheme);

/// The record of group `gid` (ID#SLOT#ATTEMPT), in `slot`.
std::string group_record_key(const KeyScheme& scheme, int slot, std::string_view gid);

/// The index of items with group holds in `slot` (hold-4002's index for the groups there).
std::string group_index_key(const KeyScheme& scheme, int slot);

/// The slot groups of a cart whose lines have these stock keys (group_by_slot of their slots).
std::vector<SlotGroup> groups_of(const std::vector<std::string>& keys);

}  // namespace stockctl
