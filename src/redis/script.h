#pragma once

#include <string_view>

namespace stockctl {

/// One embedded Lua script: its name, how many of its arguments are keys (at most: a call may
/// send fewer, see Call::numkeys), the SHA1 Redis gives its body (computed at build time), and
/// the body itself.
struct Script {
  std::string_view name;
  int numkeys;
  std::string_view sha1;
  std::string_view body;
};

}  // namespace stockctl
