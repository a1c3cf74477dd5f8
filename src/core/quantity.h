#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// The largest stock or QTY: Redis Lua numbers are doubles, exact up to 2^53-1.
inline constexpr std::int64_t kMaxStock = 9007199254740991;
/// The stored value that means "unlimited".
inline constexpr std::int64_t kUnlimited = -1;

/// A parsed number, or the reason it is not one (a message without the value's location).
struct ParsedNumber {
  std::int64_t value = 0;
  std::string error;
  bool ok() const { return error.empty(); }
};

/// Parses QTY: a decimal integer 1 .. 2^53-1 (leading and trailing blanks ignored).
ParsedNumber parse_qty(std::string_view text);

/// Parses a stock value given by a user: 0 .. 2^53-1, or -1 / "unlimited" for unlimited.
ParsedNumber parse_stock_value(std::string_view text);

/// Parses a non-negative count (a `total` or `issued` column): 0 .. 2^53-1.
ParsedNumber parse_count(std::string_view text);

/// Parses a value read back from Redis, which must be canonical ("-1" or 0 .. 2^53-1 without
/// leading zeros); anything else is corrupt and yields nullopt.
std::optional<std::int64_t> parse_stored_value(std::string_view text);

/// Parses a plain non-negative integer option value (milliseconds, seconds) up to `max`.
ParsedNumber parse_bounded(std::string_view text, std::int64_t max);

}  // namespace stockctl
