#pragma once

#include <vector>

#include "redis/script.h"

namespace stockctl {

/// The embedded scripts, by role.
const Script& stock_script();
const Script& put_script();
const Script& load_script();
const Script& unlock_script();
const Script& remove_script();
const Script& extend_script();
const Script& hold_script();
const Script& settle_script();
const Script& reap_script();
/// get's, export's and delete's view of an item's holds (expired ones not yet given back
/// included).
const Script& held_view_script();
/// The record of a cluster hold or order (the protocol's coordinator) and reap's due list.
const Script& cart_script();
const Script& carts_due_script();
/// Marks a cluster group an aborted attempt never held (a late prepare of it is refused).
const Script& tombstone_script();

/// The steps of a split or merge on the item's stock key, and on one bucket (docs/split.md).
const Script& split_item_script();
const Script& split_bucket_script();

/// Every embedded script (the Functions library holds each of them).
std::vector<const Script*> all_scripts();

/// Every embedded script as one Redis Functions library.
const Library& script_library();

}  // namespace stockctl
