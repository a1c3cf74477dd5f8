#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stockctl {

/// Who took a lock, as its value records it.
struct LockHolder {
  std::string host;
  long long pid = 0;
  std::int64_t taken_ms = 0;  ///< Unix time in ms when it was taken
};

/// The value stockctl stores in a lock: "<token> host=<host> pid=<pid> at=<ms>". The token
/// (random, unguessable) comes first and makes the value unique, so that releasing by owner
/// still compares the whole value; the rest tells an operator who holds it. White space and
/// control characters in `host` become '_' so that the value stays one line of four words.
std::string lock_value(std::string_view token, const LockHolder& holder);

/// The holder a lock value records; nullopt for a value without one (a bare token, as earlier
/// versions and other programs write it) or one that is not stockctl's.
std::optional<LockHolder> parse_lock_value(std::string_view value);

/// Says who holds lock `key` and for how long: "lock K is held by host H (pid P) since
/// 2026-12-02T03:04:05Z, 27.3 s left". `value` is the lock's value (nullopt: gone by now),
/// `pttl_ms` its PTTL reply (-1: no expiry, -2: gone), `now_ms` the Unix time in ms.
std::string describe_lock(const std::string& key, const std::optional<std::string>& value,
                          long long pttl_ms, std::int64_t now_ms);

}  // namespace stockctl
