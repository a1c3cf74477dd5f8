#include "redis/cluster/redirect.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error_reply.h"
#include "core/quantity.h"

namespace stockctl {

std::string Redirect::address() const { return fmt::format("{}:{}", host, port); }

std::optional<std::pair<std::string, int>> parse_address(std::string_view address) {
  auto colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  ParsedNumber port = parse_bounded(address.substr(colon + 1), 65535);
  if (!port.ok() || port.value == 0 || colon + 1 == address.size()) return std::nullopt;
  std::string host(address.substr(0, colon));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::make_pair(host, static_cast<int>(port.value));
}

std::optional<Redirect> parse_redirect(std::string_view error) {
  Redirect r;
  const ErrorReply kind = classify_error_reply(error);
  if (kind != ErrorReply::moved && kind != ErrorReply::ask) return std::nullopt;
  r.ask = kind == ErrorReply::ask;
  error.remove_prefix(std::min(error.size(), error.find(' ') + 1));
  auto space = error.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  ParsedNumber slot = parse_bounded(error.substr(0, space), 16383);
  if (!slot.ok() || space == 0) return std::nullopt;
  auto address = parse_address(error.substr(space + 1));
  if (!address) return std::nullopt;
  r.slot = static_cast<int>(slot.value);
  r.host = address->first;
  r.port = address->second;
  return r;
}

}  // namespace stockctl
