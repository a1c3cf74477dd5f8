#include "core/lock_value.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <vector>

#include "base/text.h"

namespace stockctl {
namespace {

std::string one_word(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) || std::iscntrl(u)) c = '_';
  }
  return out.empty() ? "_" : out;
}

template <class Number>
bool parse_number(std::string_view text, Number& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

// The value of `name=...` in `word`, or nullopt when the word is another one.
std::optional<std::string_view> field(std::string_view word, std::string_view name) {
  if (word.size() <= name.size() || word.substr(0, name.size()) != name ||
      word[name.size()] != '=') {
    return std::nullopt;
  }
  return word.substr(name.size() + 1);
}

std::string iso_utc(std::int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string time_left(long long pttl_ms) {
  if (pttl_ms == -1)
    return "no expiry: it stays until deleted (DEL the key once its holder is gone)";
  return fmt::format("{:.1f} s left", static_cast<double>(pttl_ms) / 1000.0);
}

}  // namespace

std::string lock_value(std::string_view token, const LockHolder& holder) {
  return fmt::format("{} host={} pid={} at={}", token, one_word(holder.host), holder.pid,
                     holder.taken_ms);
}

std::optional<LockHolder> parse_lock_value(std::string_view value) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0; at <= value.size();) {
    const std::size_t end = std::min(value.find(' ', at), value.size());
    words.push_back(value.substr(at, end - at));
    at = end + 1;
  }
  if (words.size() != 4 || words[0].empty()) return std::nullopt;
  auto host = field(words[1], "host");
  auto pid = field(words[2], "pid");
  auto taken = field(words[3], "at");
  LockHolder holder;
  if (!host || !pid || !taken || !parse_number(*pid, holder.pid) ||
      !parse_number(*taken, holder.taken_ms)) {
    return std::nullopt;
  }
  holder.host = std::string(*host);
  return holder;
}

std::string describe_lock(const std::string& key, const std::optional<std::string>& value,
                          long long pttl_ms, std::int64_t now_ms) {
  if (!value || pttl_ms == -2) return fmt::format("lock {} (released just now)", key);
  std::string who;
  if (std::optional<LockHolder> holder = parse_lock_value(*value)) {
    const std::int64_t age_s = (now_ms - holder->taken_ms) / 1000;
    who = fmt::format("held by {} (pid {}) since {} ({} s ago)", escape_control(holder->host),
                      holder->pid, iso_utc(holder->taken_ms), age_s);
  } else {
    who = "held (its value records no holder)";
  }
  return fmt::format("lock {} is {}, {}", key, who, time_left(pttl_ms));
}

}  // namespace stockctl
