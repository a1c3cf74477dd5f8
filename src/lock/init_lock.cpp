#include "lock/init_lock.h"

#include <fmt/format.h>
#include <sys/random.h>

#include "base/backoff.h"
#include "base/errors.h"
#include "redis/scripts/lock.h"

namespace stockctl {

std::string random_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) throw StockctlError("cannot read random bytes for a lock token");
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

LockWait acquire_lock(Client& client, const std::string& key, const std::string& token,
                      const LockTiming& timing, const std::function<bool()>& resolved) {
  // Jitter, so that waiting processes do not retry in lockstep.
  Backoff backoff(timing.wait_ms, 5, 100, true);
  for (;;) {
    Reply r =
        client.call(Call::once({"SET", key, token, "NX", "PX", std::to_string(timing.ttl_ms)}));
    if (r.is_error()) {
      throw StockctlError(fmt::format("cannot take lock {}: {}", key, r.str));
    }
    if (!r.is_nil()) return LockWait::acquired;
    if (resolved()) return LockWait::resolved;
    if (!backoff.pause()) return LockWait::timed_out;
  }
}

void release_lock(Client& client, const std::string& key, const std::string& token) noexcept {
  try {
    client.run({unlock_call(key, token)});
  } catch (...) {
    // The lock expires after its TTL; nothing more to do.
  }
}

bool extend_lock(Client& client, const std::string& key, const std::string& token,
                 long long ttl_ms) {
  return parse_extend_answer(client.call(extend_call(key, token, ttl_ms)));
}

}  // namespace stockctl
