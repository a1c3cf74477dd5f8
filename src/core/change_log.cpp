#include "core/change_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace stockctl {
namespace {

std::optional<std::int64_t> to_int(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (std::size_t k = i; k < s.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return std::nullopt;
  }
  errno = 0;
  const long long value = std::strtoll(std::string(s).c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;  // past 2^63: no time, not the largest one
  return value;
}

bool leap_year(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap_year(year) ? 29 : kDays[month - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The proleptic Gregorian date of a count of days since 1970-01-01 (Howard Hinnant's
// civil_from_days), the inverse of days_from_civil.
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
}

// Reads exactly `width` digits at `pos`.
bool digits(std::string_view s, std::size_t& pos, std::size_t width, int& out) {
  if (pos + width > s.size()) return false;
  out = 0;
  for (std::size_t i = 0; i < width; ++i) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  pos += width;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

std::optional<std::int64_t> parse_iso8601(std::string_view s) {
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, ms = 0;
  if (!digits(s, pos, 4, year) || !expect(s, pos, '-') || !digits(s, pos, 2, month) ||
      !expect(s, pos, '-') || !digits(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return std::nullopt;
  std::int64_t offset_min = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!digits(s, pos, 2, hour) || !expect(s, pos, ':') || !digits(s, pos, 2, minute)) {
      return std::nullopt;
    }
    if (pos < s.size() && s[pos] == ':' && !(++pos, digits(s, pos, 2, second))) {
      return std::nullopt;
    }
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      int scale = 100;
      std::size_t start = pos;
      for (; pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])); ++pos) {
        ms += (s[pos] - '0') * scale;
        scale /= 10;
      }
      if (pos == start) return std::nullopt;
    }
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    if (pos < s.size() && s[pos] == 'Z') {
      ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
      const int sign = s[pos++] == '-' ? -1 : 1;
      int oh = 0, om = 0;
      if (!digits(s, pos, 2, oh)) return std::nullopt;
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (!digits(s, pos, 2, om)) return std::nullopt;
      offset_min = static_cast<std::int64_t>(sign) * (oh * 60 + om);
    }
  }
  if (pos != s.size()) return std::nullopt;
  const std::int64_t days =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const std::int64_t seconds = days * 86400 + std::int64_t{hour} * 3600 +
                               std::int64_t{minute} * 60 + second - offset_min * 60;
  return seconds * 1000 + ms;
}

// The scripts write "" for a field that does not apply.
std::optional<std::string> text(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return value;
}

}  // namespace

LogEntry parse_log_entry(const std::string& id, const StreamFields& fields) {
  LogEntry e;
  e.id = id;
  e.time_ms = to_int(std::string_view(id).substr(0, id.find('-'))).value_or(0);
  for (const auto& [name, value] : fields) {
    if (name == "change")
      e.change = value;
    else if (name == "qty")
      e.qty = to_int(value);
    else if (name == "before")
      e.before = to_int(value);
    else if (name == "after")
      e.after = to_int(value);
    else if (name == "request_id")
      e.request_id = text(value);
    else if (name == "hold_id")
      e.hold_id = text(value);
    else if (name == "actor")
      e.actor = text(value);
    else if (name == "reason")
      e.reason = text(value);
  }
  return e;
}

namespace {

// The next field of `rest` up to the separator, which it consumes; nullopt at the end.
std::optional<std::string_view> next_field(std::string_view& rest) {
  const auto at = rest.find('\x1f');
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view field = rest.substr(0, at);
  rest.remove_prefix(at + 1);
  return field;
}

}  // namespace

std::optional<LogEntry> parse_first_log_entry(std::string_view packed) {
  std::string_view rest = packed;
  std::array<std::string_view, 4> f;  // ms, change, after, actor bytes
  for (std::string_view& field : f) {
    auto next = next_field(rest);
    if (!next) return std::nullopt;
    field = *next;
  }
  const auto time_ms = to_int(f[0]);
  const auto actor_bytes = to_int(f[3]);
  if (!time_ms || *time_ms < 0 || f[1].empty() || !actor_bytes || *actor_bytes < 0 ||
      static_cast<std::size_t>(*actor_bytes) > rest.size()) {
    return std::nullopt;
  }
  const auto actor_size = static_cast<std::size_t>(*actor_bytes);
  LogEntry e;
  e.id = std::string(f[0]) + "-0";
  e.time_ms = *time_ms;
  e.change = std::string(f[1]);
  e.after = to_int(f[2]);
  e.actor = text(std::string(rest.substr(0, actor_size)));
  e.reason = text(std::string(rest.substr(actor_size)));
  return e;
}

std::optional<LogEntry> parse_packed_log_entry(std::string_view packed) {
  std::string_view rest = packed;
  std::array<std::string_view, 8> f;  // id, change, qty, before, after, request, hold, actor bytes
  for (std::string_view& field : f) {
    auto next = next_field(rest);
    if (!next) return std::nullopt;
    field = *next;
  }
  const auto actor_bytes = to_int(f[7]);
  const auto time_ms = to_int(f[0].substr(0, f[0].find('-')));
  if (!actor_bytes || *actor_bytes < 0 || static_cast<std::size_t>(*actor_bytes) > rest.size() ||
      !time_ms || f[1].empty()) {
    return std::nullopt;
  }
  const auto actor_size = static_cast<std::size_t>(*actor_bytes);
  LogEntry e;
  e.id = std::string(f[0]);
  e.time_ms = *time_ms;
  e.change = std::string(f[1]);
  e.qty = to_int(f[2]);
  e.before = to_int(f[3]);
  e.after = to_int(f[4]);
  e.request_id = text(std::string(f[5]));
  e.hold_id = text(std::string(f[6]));
  e.actor = text(std::string(rest.substr(0, actor_size)));
  e.reason = text(std::string(rest.substr(actor_size)));
  return e;
}

LoadEntryPacker::LoadEntryPacker(std::int64_t ms, std::string_view change,
                                 const ChangeLogSettings& log) {
  constexpr char us = '\x1f';
  head_ = std::to_string(ms);
  head_ += us;
  head_ += change;
  head_ += us;
  tail_ += us;
  tail_ += std::to_string(log.actor.size());
  tail_ += us;
  tail_ += log.actor;
  tail_ += log.reason;
}

std::string LoadEntryPacker::entry(std::int64_t after) const {
  std::string out;
  out.reserve(head_.size() + 20 + tail_.size());
  out += head_;
  out += std::to_string(after);
  out += tail_;
  return out;
}

void place_first_entry(std::vector<LogEntry>& entries, LogEntry first_entry) {
  auto later = std::find_if(entries.begin(), entries.end(),
                            [&](const LogEntry& e) { return e.time_ms >= first_entry.time_ms; });
  entries.insert(later, std::move(first_entry));
}

std::optional<std::int64_t> parse_log_time(std::string_view text, std::string& error) {
  if (auto ms = to_int(text); ms && *ms >= 0) return ms;
  if (auto ms = parse_iso8601(text)) return ms;
  error = "expected ISO 8601 (2026-11-30T21:00:00Z) or epoch milliseconds";
  return std::nullopt;
}

std::string format_log_time(std::int64_t time_ms) {
  const std::int64_t ms = ((time_ms % 1000) + 1000) % 1000;
  const std::int64_t seconds = (time_ms - ms) / 1000;
  const std::int64_t second_of_day = ((seconds % 86400) + 86400) % 86400;
  std::int64_t year = 0;
  unsigned month = 0;
  unsigned day = 0;
  civil_from_days((seconds - second_of_day) / 86400, year, month, day);
  std::array<char, 40> text{};
  std::snprintf(text.data(), text.size(), "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(year), month, day,
                static_cast<long long>(second_of_day / 3600),
                static_cast<long long>(second_of_day / 60 % 60),
                static_cast<long long>(second_of_day % 60), static_cast<long long>(ms));
  return text.data();
}

}  // namespace stockctl
