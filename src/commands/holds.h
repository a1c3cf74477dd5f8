#pragma once

#include <cstdint>
#include <string_view>

namespace stockctl {

// Holds arrive with the hold commands. Until then nothing is ever held, and these two are the
// places where the hold records of an item are to be read.

/// Units of the item at `stock_key` in unexpired holds (get, export). No holds exist yet: 0.
inline std::int64_t held_units(std::string_view /*stock_key*/) { return 0; }

/// Whether `delete` must refuse the item at `stock_key` (status conflict, unless --force)
/// because it has unexpired holds. No holds exist yet: never.
inline bool has_unexpired_holds(std::string_view /*stock_key*/) { return false; }

}  // namespace stockctl
