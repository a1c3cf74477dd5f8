#include "lock/run_lock.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "core/error_reply.h"
#include "lock/init_lock.h"

namespace stockctl {

RunLock::RunLock(Client& client, std::string key, long long ttl_ms)
    : client_(client), key_(std::move(key)), token_(new_lock_value()), ttl_ms_(ttl_ms) {}

RunLock::~RunLock() {
  // A SET NX whose answer never came may have taken the lock: released by its token, which
  // deletes nothing that another run holds, rather than left to block the next run for its ttl.
  if (held_ || take_unanswered_) release_lock(client_, key_, token_);
}

bool RunLock::take() {
  take_unanswered_ = true;  // until an answer comes (call() throws ConnectionError without one)
  Reply r = client_.call(Call::once({"SET", key_, token_, "NX", "PX", std::to_string(ttl_ms_)}));
  take_unanswered_ = false;
  if (r.is_error() && classify_error_reply(r.str) == ErrorReply::noperm) {
    // The run lock's key is "stockctl:rebuild-lock:<prefix>" (rebuild_lock_key).
    constexpr std::string_view kHead = "stockctl:rebuild-lock:";
    const std::string_view prefix =
        key_.rfind(kHead, 0) == 0 ? std::string_view(key_).substr(kHead.size()) : "";
    throw StockctlError(fmt::format("{}: {}; {}", key_, r.str, noperm_hint(prefix)));
  }
  if (r.is_error()) throw StockctlError(fmt::format("{}: {}", key_, r.str));
  if (r.is_nil()) return false;
  held_ = true;
  renewed_ = std::chrono::steady_clock::now();
  return true;
}

void RunLock::renew() {
  const auto now = std::chrono::steady_clock::now();
  if (now - renewed_ < std::chrono::milliseconds(ttl_ms_ / 3)) return;
  if (!extend_lock(client_, key_, token_, ttl_ms_)) {
    throw StockctlError(fmt::format("lost the rebuild lock {}; stopped", key_));
  }
  renewed_ = now;
}

}  // namespace stockctl
