#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// A cluster redirect: "MOVED <slot> <host>:<port>" (the slot lives elsewhere now) or
/// "ASK <slot> <host>:<port>" (this key is being migrated; ask there, once).
struct Redirect {
  bool ask = false;
  int slot = 0;
  std::string host;
  int port = 0;

  std::string address() const;
};

/// Parses a MOVED or ASK error text; nullopt for any other error.
std::optional<Redirect> parse_redirect(std::string_view error);

/// Parses "host:port" (the host may be an IPv6 address, whose last ':' separates the port).
std::optional<std::pair<std::string, int>> parse_address(std::string_view address);

}  // namespace stockctl
