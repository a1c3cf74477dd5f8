#pragma once

#include <string_view>

namespace stockctl {

/// Every embedded script as one Redis Functions library (Redis 7): loaded once with FUNCTION
/// LOAD, called with FCALL. Its name is versioned by the scripts' content.
struct Library {
  std::string_view name;
  std::string_view code;
};

/// One embedded Lua script: its name, how many of its arguments are keys when a call does not
/// say (the K of lua/NAME-K.lua; a call may send fewer or more, see Call::numkeys: stock-2
/// sends its stock key alone without id and log, and up to five keys with both; put-2 up to
/// four with the log), the SHA1 Redis gives its body (computed at build time), the body itself,
/// the name of the same body as a function, and the library that holds it.
struct Script {
  std::string_view name;
  int numkeys;
  std::string_view sha1;
  std::string_view body;
  std::string_view function;
  const Library* library;
};

}  // namespace stockctl
