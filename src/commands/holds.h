#pragma once

#include <cstdint>
#include <string>

#include "redis/client.h"

namespace stockctl {

/// Units of the item at `stock_key` in unexpired holds, as get and export count them
/// (lua/held_view-3.lua: holds that expired and were not yet given back do not count). One call.
/// Throws ConnectionError.
std::int64_t held_units(Client& client, const std::string& stock_key);

/// Whether `delete` must refuse the item at `stock_key` (status conflict, unless --force)
/// because it has unexpired holds. Throws ConnectionError.
inline bool has_unexpired_holds(Client& client, const std::string& stock_key) {
  return held_units(client, stock_key) > 0;
}

}  // namespace stockctl
