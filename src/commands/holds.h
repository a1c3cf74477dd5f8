#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "redis/client.h"

namespace stockctl {

/// The read-only call that answers how many units of the item at `stock_key` are in unexpired
/// holds (get, export pipeline it beside their own reads).
Call held_call(const std::string& stock_key);

/// The units a held_call answered; nullopt when it got no integer reply.
std::optional<std::int64_t> held_from(const CallResult& result);

/// Units of the item at `stock_key` in unexpired holds (one call). Throws ConnectionError.
std::int64_t held_units(Client& client, const std::string& stock_key);

/// Whether `delete` must refuse the item at `stock_key` (status conflict, unless --force)
/// because it has unexpired holds. Throws ConnectionError.
inline bool has_unexpired_holds(Client& client, const std::string& stock_key) {
  return held_units(client, stock_key) > 0;
}

}  // namespace stockctl
