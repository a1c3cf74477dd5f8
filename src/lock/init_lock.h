#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "redis/client.h"

namespace stockctl {

/// How long a lock lives and how long we wait for one.
struct LockTiming {
  long long ttl_ms = 10000;
  long long wait_ms = 5000;
};

/// A random token (128 bits, hex) that proves a lock is ours.
std::string random_token();

/// A new lock's value: a random token followed by this host, this process and the time
/// (core/lock_value.h), so that an operator finding the lock held can tell who holds it. The
/// whole value is what release and extend compare.
std::string new_lock_value();

/// Says who holds lock `key` and how long it has left (describe_lock in core/lock_value.h), read
/// with GET and PTTL. Never throws: without an answer it names the key alone.
std::string describe_held_lock(Client& client, const std::string& key) noexcept;
/// describe_held_lock for several locks, read in one pipeline.
std::vector<std::string> describe_held_locks(Client& client,
                                             const std::vector<std::string>& keys) noexcept;

/// How waiting for a lock ended.
enum class LockWait {
  acquired,   ///< the lock is ours
  resolved,   ///< `resolved()` said the work is done (another process did it)
  timed_out,  ///< still held by someone else after the wait
};

/// Takes `key` with SET NX PX and our `token`, retrying with backoff until `timing.wait_ms`
/// passes or the run is interrupted (timed_out then too); between tries calls `resolved()`,
/// which returns true when waiting is pointless.
/// Throws ConnectionError, or StockctlError on an error reply.
LockWait acquire_lock(Client& client, const std::string& key, const std::string& token,
                      const LockTiming& timing, const std::function<bool()>& resolved);

/// Releases `key` only if it still holds `token` (compare-and-delete). Never throws: a lock we
/// cannot release expires by itself.
void release_lock(Client& client, const std::string& key, const std::string& token) noexcept;

/// Pushes the lock's expiry to `ttl_ms` from now while it holds `token`; false when it is lost.
bool extend_lock(Client& client, const std::string& key, const std::string& token,
                 long long ttl_ms);

/// Releases a lock when the scope ends, however it ends.
class LockRelease {
 public:
  LockRelease(Client& client, std::string key, std::string token)
      : client_(client), key_(std::move(key)), token_(std::move(token)) {}
  ~LockRelease() { release_lock(client_, key_, token_); }
  LockRelease(const LockRelease&) = delete;
  LockRelease& operator=(const LockRelease&) = delete;

 private:
  Client& client_;
  std::string key_;
  std::string token_;
};

}  // namespace stockctl
