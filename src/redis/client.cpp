#include "redis/client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "redis/errors.h"

namespace stockctl {

bool retryable(const Call& call, const CallResult& result) {
  switch (result.state) {
    case CallResult::State::not_sent:
      return true;
    case CallResult::State::unknown:
      return call.idempotent;
    case CallResult::State::replied:
      break;
  }
  if (!result.reply.is_error()) return false;
  // These replies mean the command was not executed: the cluster is reconfiguring, the server
  // is loading its data, or we reached a primary that has just become a replica.
  const std::string code = result.reply.error_code();
  return code == "TRYAGAIN" || code == "CLUSTERDOWN" || code == "LOADING" || code == "READONLY" ||
         code == "MASTERDOWN";
}

std::vector<CallResult> Client::run(const std::vector<Call>& calls) {
  return settle(calls, send(calls));
}

void Client::start(std::vector<Call> calls) { started_.push_back(std::move(calls)); }

std::vector<CallResult> Client::finish() {
  std::vector<Call> calls = std::move(started_.front());
  started_.pop_front();
  return run(calls);
}

std::vector<CallResult> Client::settle(const std::vector<Call>& calls,
                                       std::vector<CallResult> results) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(options_.retry_timeout_ms);
  long long pause_ms = 20;
  for (;;) {
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (retryable(calls[i], results[i])) again.push_back(i);
    }
    if (again.empty()) {
      down_ = false;
      return results;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (down_ || left.count() <= 0) {
      down_ = true;  // the next windows report at once instead of waiting again
      return results;
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min<long long>(pause_ms, left.count())));
    pause_ms = std::min<long long>(pause_ms * 2, 500);
    recover();
    std::vector<Call> retry;
    retry.reserve(again.size());
    for (std::size_t i : again) retry.push_back(calls[i]);
    std::vector<CallResult> retried = send(retry);
    for (std::size_t k = 0; k < again.size(); ++k) {
      CallResult& earlier = results[again[k]];
      CallResult& later = retried[k];
      // Once an attempt may have been applied, a later one that certainly was not (never sent,
      // or refused with LOADING, TRYAGAIN, ...) says nothing about the first: the outcome stays
      // unknown until a real answer comes.
      if (earlier.state == CallResult::State::unknown &&
          later.state != CallResult::State::unknown && retryable(calls[again[k]], later)) {
        continue;
      }
      earlier = std::move(later);
    }
  }
}

Reply Client::call(const Call& call) {
  std::vector<CallResult> results = run({call});
  if (results[0].state != CallResult::State::replied) throw ConnectionError(results[0].error);
  return std::move(results[0].reply);
}

}  // namespace stockctl
