#pragma once

#include <string_view>

namespace stockctl {

/// One embedded Lua script: its name, how many of its arguments are keys (the usual count; a
/// call may send fewer or more, see Call::keys), the SHA1 Redis gives
/// its body (computed at build time), and the body itself.
struct Script {
  std::string_view name;
  int numkeys;
  std::string_view sha1;
  std::string_view body;
};

}  // namespace stockctl
