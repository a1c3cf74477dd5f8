#include "lock/init_lock.h"

#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <chrono>

#include "base/backoff.h"
#include "base/errors.h"
#include "core/error_reply.h"
#include "core/lock_value.h"
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

namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace

std::string new_lock_value() {
  return lock_value(random_token(),
                    LockHolder{host_name(), static_cast<long long>(getpid()), unix_ms()});
}

std::string describe_held_lock(Client& client, const std::string& key) noexcept {
  return describe_held_locks(client, {key}).front();
}

std::vector<std::string> describe_held_locks(Client& client,
                                             const std::vector<std::string>& keys) noexcept {
  std::vector<std::string> out;
  try {
    std::vector<Call> calls;
    for (const std::string& key : keys) {
      calls.push_back(Call::read({"GET", key}));
      calls.push_back(Call::read({"PTTL", key}));
    }
    const std::vector<CallResult> r = client.run(calls);
    const std::int64_t now = unix_ms();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const CallResult& value = r[2 * i];
      const CallResult& pttl = r[2 * i + 1];
      if (value.state != CallResult::State::replied || value.reply.is_error() ||
          pttl.state != CallResult::State::replied || pttl.reply.type != Reply::Type::integer) {
        out.push_back(fmt::format("lock {}", keys[i]));
        continue;
      }
      out.push_back(describe_lock(keys[i], value.reply.string_or_nil(), pttl.reply.integer, now));
    }
  } catch (...) {
    // Only the messages are at stake: each names its key alone.
    out.clear();
    for (const std::string& key : keys) out.push_back(fmt::format("lock {}", key));
  }
  return out;
}

LockWait acquire_lock(Client& client, const std::string& key, const std::string& token,
                      const LockTiming& timing, const std::function<bool()>& resolved) {
  // Jitter, so that waiting processes do not retry in lockstep.
  Backoff backoff(timing.wait_ms, 5, 100, true);
  for (;;) {
    Reply r =
        client.call(Call::once({"SET", key, token, "NX", "PX", std::to_string(timing.ttl_ms)}));
    if (r.is_error()) {
      const bool acl = classify_error_reply(r.str) == ErrorReply::noperm;
      throw StockctlError(
          fmt::format("cannot take lock {}: {}{}", key, r.str, acl ? "; " + noperm_hint("") : ""));
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
