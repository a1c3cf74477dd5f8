#pragma once

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "base/interrupt.h"

namespace stockctl {

/// Waits between tries until a deadline: the pause doubles from `first_ms` up to `max_ms`, and
/// the last one is cut short at the deadline. With `jitter`, up to 4 ms are added to each pause
/// so that processes waiting for the same thing do not retry in lockstep.
class Backoff {
 public:
  Backoff(long long total_ms, long long first_ms, long long max_ms, bool jitter = false)
      : deadline_(clock::now() + std::chrono::milliseconds(total_ms)),
        pause_ms_(first_ms),
        max_ms_(max_ms),
        jitter_(jitter) {
    if (jitter_) random_.seed(std::random_device{}());
  }

  /// Sleeps before the next try and returns true, or returns false at once when the deadline
  /// has passed or the run was interrupted (SIGINT, SIGTERM): no loop waits past a stop.
  bool pause() {
    if (interrupted()) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - clock::now());
    if (left.count() <= 0) return false;
    long long ms = pause_ms_ + (jitter_ ? static_cast<long long>(random_() % 5) : 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long long>(ms, left.count())));
    pause_ms_ = std::min<long long>(pause_ms_ * 2, max_ms_);
    return !interrupted();
  }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point deadline_;
  long long pause_ms_;
  long long max_ms_;
  bool jitter_;
  std::minstd_rand random_;
};

}  // namespace stockctl
