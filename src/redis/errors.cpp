#include "redis/errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace stockctl {

TimeoutError timeout_error(const std::string& doing, const std::string& where,
                           long long timeout_ms) {
  return TimeoutError(
      fmt::format("{} {}: no answer within {} ms (server down, paused or unreachable?)", doing,
                  where, timeout_ms));
}

ConnectionError closed_or_system_error(const std::string& doing, const std::string& where,
                                       int err) {
  if (err == 0 || err == ECONNRESET || err == EPIPE) {
    return ConnectionError(fmt::format("{} {}: the server closed the connection", doing, where));
  }
  return ConnectionError(fmt::format("{} {}: {}", doing, where, std::strerror(err)));
}

}  // namespace stockctl
