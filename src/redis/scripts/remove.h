#pragma once

#include <optional>
#include <string>

#include "redis/client.h"

namespace stockctl {

/// The call of lua/remove-1.lua that takes an item's stock key away for `delete`, unless it
/// holds a split item's layout record (a split that began after delete read the key). Sent at
/// most once: a second try would find nothing and lose what the first removed.
Call remove_call(const std::string& stock_key);

/// What the remove script answered.
struct RemoveAnswer {
  bool split = false;                ///< the key holds a layout record and was kept
  std::optional<std::string> value;  ///< what the key held (nullopt: it was missing)
};

/// The answer in `reply`; nullopt when it is not of the script's shape.
std::optional<RemoveAnswer> parse_remove_answer(const Reply& reply);

}  // namespace stockctl
