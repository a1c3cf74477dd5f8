#include "core/quantity.h"

#include <fmt/format.h>

#include "base/text.h"

namespace stockctl {
namespace {

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Digits only, value <= kMaxStock; nullopt when not a decimal or too large.
std::optional<std::int64_t> parse_digits(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::int64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > kMaxStock) return std::nullopt;
  }
  return value;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

ParsedNumber fail(std::string_view text, std::string_view what) {
  return {0, fmt::format("{} is not {}", quote_value(text), what)};
}

ParsedNumber parse_non_negative(std::string_view raw, std::string_view what) {
  std::string_view s = trim_blanks(raw);
  if (auto v = parse_digits(s)) return {*v, {}};
  if (all_digits(s)) {
    // "a stock value is at most ...": the noun alone, without the range in parentheses.
    return {0, fmt::format("{} is too large: {} is at most {}", quote_value(s),
                           what.substr(0, what.find(" (")), kMaxStock)};
  }
  // "+5" reads as a number to a person, but a value is written without a sign, as Redis
  // stores it: say so rather than leaving the reader to guess.
  if (s.size() > 1 && s.front() == '+' && all_digits(s.substr(1))) {
    return {0, fmt::format("{} is not {}: write it without a sign", quote_value(s), what)};
  }
  return fail(s, what);
}

}  // namespace

ParsedNumber parse_qty(std::string_view text) {
  constexpr std::string_view what = "a quantity (an integer from 1 to 9007199254740991)";
  ParsedNumber n = parse_non_negative(text, what);
  if (n.ok() && n.value == 0) return fail(trim_blanks(text), what);
  if (!n.ok() && n.error.find("too large") != std::string::npos) {
    return {0, fmt::format("{} is too large: a quantity is at most {}",
                           quote_value(trim_blanks(text)), kMaxStock)};
  }
  return n;
}

ParsedNumber parse_stock_value(std::string_view text) {
  std::string_view s = trim_blanks(text);
  if (s == "unlimited" || s == "-1") return {kUnlimited, {}};
  ParsedNumber n =
      parse_non_negative(s, "a stock value (0 to 9007199254740991, or -1 / unlimited)");
  return n;
}

ParsedNumber parse_count(std::string_view text) {
  return parse_non_negative(text, "a count (an integer from 0 to 9007199254740991)");
}

std::optional<std::int64_t> parse_stored_value(std::string_view text) {
  if (text == "-1") return kUnlimited;
  if (text.size() > 1 && text.front() == '0') return std::nullopt;
  return parse_digits(text);
}

ParsedNumber parse_bounded(std::string_view text, std::int64_t max) {
  std::string_view s = trim_blanks(text);
  auto v = parse_digits(s);
  if (!v || *v > max)
    return {0, fmt::format("{} is not an integer from 0 to {}", quote_value(s), max)};
  return {*v, {}};
}

}  // namespace stockctl
