#include "redis/errors.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <cerrno>

namespace stockctl {

ConnectionError context_error(const redisContext* ctx, const std::string& doing,
                              const std::string& where, long long timeout_ms) {
  if (ctx == nullptr) return ConnectionError(fmt::format("{} {}: out of memory", doing, where));
  // hiredis reports a socket timeout as an I/O error with EAGAIN / EINPROGRESS.
  bool timed_out = ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK ||
                                                errno == EINPROGRESS || errno == ETIMEDOUT);
  if (timed_out || std::string(ctx->errstr).find("timed out") != std::string::npos) {
    return ConnectionError(
        fmt::format("{} {}: no answer within {} ms (server down, paused or unreachable?)", doing,
                    where, timeout_ms));
  }
  if (ctx->err == REDIS_ERR_EOF) {
    return ConnectionError(fmt::format("{} {}: the server closed the connection", doing, where));
  }
  return ConnectionError(fmt::format("{} {}: {}", doing, where, ctx->errstr));
}

}  // namespace stockctl
