#pragma once

#include <cstdint>
#include <optional>

#include "redis/reply.h"

namespace stockctl {

/// What the stock script (lua/stock-2.lua) answered: the classic answer (-3, -2, -1 or the
/// stock left), the stock after the call, and whether it is a repeated request id's first
/// answer.
struct ScriptAnswer {
  std::int64_t answer = 0;
  std::int64_t stock = 0;
  bool replayed = false;
};

/// Reads the stock script's reply: an integer when the answer is the stock itself, else
/// {answer, stock, replayed}. nullopt for anything else (an error reply included).
std::optional<ScriptAnswer> parse_stock_answer(const Reply& reply);

}  // namespace stockctl
