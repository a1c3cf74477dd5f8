#include "redis/client.h"

#include <fmt/format.h>

#include "base/backoff.h"
#include "base/diagnostics.h"
#include "core/outcome.h"
#include "redis/connection.h"
#include "redis/errors.h"

namespace stockctl {
namespace {

using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point started) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
}

// What was tried, for a message about a call that was retried: " (3 tries over 2000 ms)".
std::string tries_note(int tries, Clock::time_point started) {
  if (tries < 2) return {};
  return fmt::format(" ({} tries over {} ms)", tries, ms_since(started));
}

// Says what became of a call left without a usable answer. A write that was never sent was
// certainly not applied; one whose connection broke may have been. A read changes nothing, so
// its outcome is never "unknown": it just got no answer.
void describe(const Call& call, CallResult& result, const std::string& tried) {
  switch (result.state) {
    case CallResult::State::not_sent:
      result.error += tried;
      if (!call.reads_only()) result.error = not_applied(result.error);
      return;
    case CallResult::State::unknown:
      result.error += tried;
      if (!call.reads_only()) result.error = outcome_unknown(result.error);
      return;
    case CallResult::State::replied:
      if (!tried.empty() && retryable(call, result)) result.reply.str += tried;
      return;
  }
}

}  // namespace

bool retryable(const Call& call, const CallResult& result) {
  switch (result.state) {
    case CallResult::State::not_sent:
      return !result.hopeless;
    case CallResult::State::unknown:
      return call.idempotent;
    case CallResult::State::replied:
      break;
  }
  if (!result.reply.is_error()) return false;
  // A read with a split form is answered by it at once (Client::split_refused_reads).
  if (call.split != nullptr && result.reply.error_kind() == ErrorReply::tryagain) return false;
  // These replies mean the command was not executed: the cluster is reconfiguring, the server
  // is loading its data, or we reached a primary that has just become a replica.
  return not_executed(result.reply.error_kind());
}

void Client::append_wait(Connection& conn, int replicas) const {
  conn.append({"WAIT", std::to_string(replicas), std::to_string(options_.wait_timeout_ms)});
}

int Client::read_wait(Connection& conn) const {
  Reply acked = conn.read_beyond_timeout(options_.wait_timeout_ms);
  return acked.type == Reply::Type::integer ? static_cast<int>(acked.integer) : 0;
}

std::vector<CallResult> Client::run(const std::vector<Call>& calls) {
  const auto started = Clock::now();
  return settle(calls, send(calls), started);
}

Reply Client::call_on(const std::string& /*node*/, const Call& c) { return call(c); }

void Client::start(std::vector<Call> calls) { queued_.open().calls = std::move(calls); }

std::vector<CallResult> Client::finish() { return run(queued_.take_oldest().calls); }

void Client::split_refused_reads(const std::vector<Call>& calls, std::vector<CallResult>& results) {
  std::vector<std::size_t> refused;
  std::vector<Call> reads;
  std::vector<std::size_t> first_read;  // per refused call: where its reads start in `reads`
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CallResult& r = results[i];
    // A script the server refused before it ran, that plain reads can stand in for: one whose
    // keys a migration splits (TRYAGAIN), or a read-only script refused as a script (a server
    // at its maxmemory, or short of replicas for min-replicas-to-write, refuses scripts that
    // are not flagged as read-only; an ACL may allow reads and no scripting).
    const ErrorReply kind = r.state == CallResult::State::replied && r.reply.is_error()
                                ? r.reply.error_kind()
                                : ErrorReply::other;
    const bool refused_script = kind == ErrorReply::tryagain || kind == ErrorReply::noperm ||
                                kind == ErrorReply::writes_refused;
    if (calls[i].split == nullptr || !refused_script) continue;
    refused.push_back(i);
    first_read.push_back(reads.size());
    std::vector<Call> own = calls[i].split->reads(calls[i]);
    reads.insert(reads.end(), std::make_move_iterator(own.begin()),
                 std::make_move_iterator(own.end()));
  }
  if (refused.empty()) return;
  std::vector<CallResult> answers = run(reads);
  first_read.push_back(reads.size());
  for (std::size_t k = 0; k < refused.size(); ++k) {
    const Call& call = calls[refused[k]];
    const auto from = answers.begin() + static_cast<std::ptrdiff_t>(first_read[k]);
    const auto to = answers.begin() + static_cast<std::ptrdiff_t>(first_read[k + 1]);
    std::vector<CallResult> own(std::make_move_iterator(from), std::make_move_iterator(to));
    results[refused[k]] = call.split->combine(call, std::move(own));
  }
}

std::vector<CallResult> Client::settle(const std::vector<Call>& calls,
                                       std::vector<CallResult> results, Clock::time_point started) {
  // The retry period counts from the first attempt, so that a command that gets no answer ends
  // within about --retry-timeout plus one --timeout.
  Backoff backoff(options_.retry_timeout_ms - ms_since(started), 20, 500);
  int tries = 1;
  for (;; ++tries) {
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (retryable(calls[i], results[i])) again.push_back(i);
    }
    if (again.empty()) {
      down_ = false;
      break;
    }
    if (down_ || !backoff.pause()) {
      down_ = true;  // the next windows report at once instead of waiting again
      break;
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
      const bool after_unknown =
          earlier.state == CallResult::State::unknown || earlier.after_unknown;
      earlier = std::move(later);
      earlier.after_unknown = after_unknown;
    }
  }
  split_refused_reads(calls, results);
  const std::string tried = tries_note(tries, started);
  for (std::size_t i = 0; i < calls.size(); ++i) describe(calls[i], results[i], tried);
  return results;
}

void Client::connect_retrying(const std::function<void()>& connect) const {
  const auto started = Clock::now();
  Backoff backoff(options_.retry_timeout_ms, 20, 500);
  for (int tries = 1;; ++tries) {
    try {
      return connect();
    } catch (const FatalConnectionError&) {
      throw;
    } catch (const ConnectionError& e) {
      // Said once, so that a person at a terminal knows what the silence is (--verbose says
      // it in a log too).
      if (tries == 1 && options_.retry_timeout_ms > 0) {
        print_notice(fmt::format("{}; trying again for up to {} ms (--retry-timeout)", e.what(),
                                 options_.retry_timeout_ms));
      }
      if (!backoff.pause()) {
        throw ConnectionError(fmt::format("{}{}", e.what(), tries_note(tries, started)));
      }
    }
  }
}

Reply Client::call(const Call& call) {
  std::vector<CallResult> results = run({call});
  if (results[0].state != CallResult::State::replied) throw ConnectionError(results[0].error);
  return std::move(results[0].reply);
}

}  // namespace stockctl
