#include "redis/client.h"

#include "redis/backoff.h"
#include "redis/connection.h"
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

void Client::append_wait(Connection& conn) const {
  conn.append(
      {"WAIT", std::to_string(options_.wait_replicas), std::to_string(options_.wait_timeout_ms)});
}

int Client::read_wait(Connection& conn) {
  Reply acked = conn.read();
  return acked.type == Reply::Type::integer ? static_cast<int>(acked.integer) : 0;
}

std::vector<CallResult> Client::run(const std::vector<Call>& calls) {
  return settle(calls, send(calls));
}

Reply Client::call_on(const std::string& /*node*/, const Call& c) { return call(c); }

void Client::start(std::vector<Call> calls) { started_.push_back(std::move(calls)); }

std::vector<CallResult> Client::finish() {
  std::vector<Call> calls = std::move(started_.front());
  started_.pop_front();
  return run(calls);
}

std::vector<CallResult> Client::settle(const std::vector<Call>& calls,
                                       std::vector<CallResult> results) {
  Backoff backoff(options_.retry_timeout_ms, 20, 500);
  for (;;) {
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (retryable(calls[i], results[i])) again.push_back(i);
    }
    if (again.empty()) {
      down_ = false;
      return results;
    }
    if (down_ || !backoff.pause()) {
      down_ = true;  // the next windows report at once instead of waiting again
      return results;
    }
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
