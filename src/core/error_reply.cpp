#include "core/error_reply.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>

#include "base/text.h"

namespace stockctl {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

ErrorReply classify_error_reply(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, ErrorReply>, 18> kCodes{{
      {"NOSCRIPT", ErrorReply::noscript},
      {"NOAUTH", ErrorReply::noauth},
      {"MOVED", ErrorReply::moved},
      {"ASK", ErrorReply::ask},
      {"TRYAGAIN", ErrorReply::tryagain},
      {"CLUSTERDOWN", ErrorReply::clusterdown},
      {"LOADING", ErrorReply::loading},
      {"READONLY", ErrorReply::readonly},
      {"MASTERDOWN", ErrorReply::masterdown},
      {"WRONGTYPE", ErrorReply::wrongtype},
      {"STOCKCTL_CONFLICT", ErrorReply::stockctl_conflict},
      {"STOCKCTL_CORRUPT", ErrorReply::stockctl_corrupt},
      {"STOCKCTL_OVERFLOW", ErrorReply::stockctl_overflow},
      {"STOCKCTL_INVALID", ErrorReply::stockctl_invalid},
      {"STOCKCTL_LOG_LOST", ErrorReply::stockctl_log_lost},
      {"OOM", ErrorReply::writes_refused},
      {"NOREPLICAS", ErrorReply::writes_refused},
      {"NOPERM", ErrorReply::noperm},
  }};
  const std::string_view code = text.substr(0, text.find(' '));
  for (const auto& [name, kind] : kCodes) {
    if (code == name) return kind;
  }
  // A script's ACL failure comes back as an ERR that quotes the refusal.
  if (text.find("No permissions to access") != std::string_view::npos ||
      text.find("has no permissions to") != std::string_view::npos) {
    return ErrorReply::noperm;
  }
  // Generic ERR replies are told apart by their text, which Redis has kept stable.
  if (starts_with(text, "ERR Function not found")) return ErrorReply::no_function;
  if (starts_with(lower(text), "err unknown command")) return ErrorReply::unknown_command;
  if (starts_with(text, "ERR Library") && text.find("already exists") != std::string_view::npos) {
    return ErrorReply::library_exists;
  }
  if (text.find("syntax error") != std::string_view::npos) return ErrorReply::syntax;
  if (text.find("cluster support disabled") != std::string_view::npos) {
    return ErrorReply::cluster_disabled;
  }
  return ErrorReply::other;
}

std::optional<CorruptLine> corrupt_line(std::string_view text) {
  if (classify_error_reply(text) != ErrorReply::stockctl_corrupt) return std::nullopt;
  const std::size_t start = text.find(' ') + 1;
  const std::size_t end = text.find(' ', start);
  if (end == std::string_view::npos) return std::nullopt;
  std::size_t line = 0;
  const char* first = text.data() + start;
  const char* last = text.data() + end;
  const auto [ptr, ec] = std::from_chars(first, last, line);
  if (ec != std::errc() || ptr != last || line == 0 || *first == '0') return std::nullopt;
  return CorruptLine{line - 1, "STOCKCTL_CORRUPT " + std::string(text.substr(end + 1))};
}

bool refuses_command(std::string_view text, std::string_view command) {
  const std::string lowered = lower(text);
  if (lowered.find(command) == std::string::npos) return false;
  switch (classify_error_reply(text)) {
    case ErrorReply::unknown_command:
      return true;
    case ErrorReply::noperm:
      // Redis 7 names a subcommand with its command: "... to run the 'function|list' command".
      return lowered.find("'" + std::string(command) + "' command") != std::string::npos ||
             lowered.find("'" + std::string(command) + "|") != std::string::npos;
    default:
      return false;
  }
}

std::string noperm_hint(std::string_view prefix) {
  const std::string items = prefix.empty() ? "<prefix>" : std::string(prefix);
  return "the Redis user lacks an ACL permission stockctl needs: the key patterns ~" + items +
         "* (the items and their companion keys) and ~stockctl:* (hold records, the rebuild "
         "lock, change logs), and the commands of the ACL recipe in the README";
}

std::string with_noperm_hint(std::string_view text, std::string_view prefix) {
  std::string out = escape_control(text);
  if (classify_error_reply(text) == ErrorReply::noperm) out += "; " + noperm_hint(prefix);
  return out;
}

std::string error_on(std::string_view where, std::string_view text, std::string_view prefix) {
  const bool refused = classify_error_reply(text) == ErrorReply::noperm;
  return (refused ? "refused on " : "") + escape_control(where) + ": " +
         with_noperm_hint(text, prefix);
}

std::string without_script_location(std::string_view text) {
  const std::size_t at = text.rfind(" script: ");
  if (at == std::string_view::npos || text.find(", on @user_", at) == std::string_view::npos) {
    return std::string(text);
  }
  return std::string(text.substr(0, at));
}

bool not_executed(ErrorReply kind) {
  return kind == ErrorReply::tryagain || kind == ErrorReply::clusterdown ||
         kind == ErrorReply::loading || kind == ErrorReply::readonly ||
         kind == ErrorReply::masterdown;
}

}  // namespace stockctl
