#pragma once

#include <chrono>
#include <string>

#include "redis/client.h"

namespace stockctl {

/// A lock one whole run holds (rebuild: one per prefix), so that two runs never write the same
/// items at once. Taken once before the first write, extended while the run goes on, released
/// (only if still ours) when the RunLock is destroyed, also after a take() that got no answer.
class RunLock {
 public:
  RunLock(Client& client, std::string key, long long ttl_ms);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  /// Takes the lock with SET NX PX; false when another run holds it. Throws StockctlError on an
  /// error reply, ConnectionError when no reply came.
  bool take();
  /// Extends the lock once a third of its lifetime has passed since it was taken or last
  /// extended (a round trip per window would stall the pipeline). Throws StockctlError when the
  /// lock was lost (it expired and someone else took it), ConnectionError when no reply came.
  void renew();

  const std::string& key() const { return key_; }

 private:
  Client& client_;
  std::string key_;
  std::string token_;
  long long ttl_ms_;
  bool held_ = false;
  bool take_unanswered_ = false;  ///< take()'s SET NX got no answer: it may hold the lock
  std::chrono::steady_clock::time_point renewed_;
};

}  // namespace stockctl
