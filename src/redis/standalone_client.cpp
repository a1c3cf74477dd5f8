#include "redis/standalone_client.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/diagnostics.h"
#include "redis/call.h"
#include "redis/errors.h"

namespace stockctl {

StandaloneClient::StandaloneClient(ConnectOptions options, ClientOptions client_options)
    : Client(client_options), options_(std::move(options)) {
  connect_retrying([this] { conn_ = std::make_unique<Connection>(options_); });
}

std::vector<CallResult> StandaloneClient::send(const std::vector<Call>& calls) {
  std::vector<CallResult> results = send_raw(calls);
  reload_missing_scripts(calls, results);
  return results;
}

void StandaloneClient::recover() noexcept {
  // A READONLY or a lost connection behind sentinels means the master may have moved. The
  // windows still on the wire are read first (their results stay theirs); then the next
  // connection asks the sentinels again.
  if (options_.url.kind != RedisUrl::Kind::sentinel || !conn_) return;
  drain();
  conn_.reset();
}

void StandaloneClient::start(std::vector<Call> calls) { transmit(std::move(calls)); }

std::vector<CallResult> StandaloneClient::finish() {
  InFlight& oldest = in_flight_.front();
  if (!oldest.settled) read_replies(oldest);
  InFlight window = std::move(oldest);
  in_flight_.pop_front();
  reload_missing_scripts(window.calls, window.results);
  return settle(window.calls, std::move(window.results), window.started);
}

std::vector<CallResult> StandaloneClient::send_raw(const std::vector<Call>& calls) {
  drain();
  InFlight& window = transmit(calls);
  if (!window.settled) read_replies(window);
  std::vector<CallResult> results = std::move(window.results);
  in_flight_.pop_back();
  return results;
}

StandaloneClient::InFlight& StandaloneClient::transmit(std::vector<Call> calls) {
  InFlight& window = in_flight_.emplace_back();
  window.results.resize(calls.size());
  window.calls = std::move(calls);
  if (!conn_) {
    // Nothing of this window was sent yet, so reconnecting cannot apply anything twice.
    try {
      conn_ = std::make_unique<Connection>(options_);
    } catch (const ConnectionError& e) {
      const bool fatal = dynamic_cast<const FatalConnectionError*>(&e) != nullptr;
      for (auto& r : window.results) {
        r.error = e.what();
        r.hopeless = fatal;
      }
      window.settled = true;
      return window;
    }
  }
  const int replicas = options().wait_replicas;
  window.wait = replicas > 0 && std::any_of(window.calls.begin(), window.calls.end(),
                                            [](const Call& c) { return c.writes; });
  try {
    for (const Call& c : window.calls) append_call(*conn_, c);
    if (window.wait) append_wait(*conn_);
    conn_->flush();
  } catch (const ConnectionError& e) {
    lose_connection(e.what());
  }
  return window;
}

void StandaloneClient::read_replies(InFlight& window) {
  try {
    for (; window.read < window.calls.size(); ++window.read) {
      window.results[window.read].reply = conn_->read();
      window.results[window.read].state = CallResult::State::replied;
    }
    if (window.wait) {
      const int count = read_wait(*conn_);
      for (std::size_t k = 0; k < window.calls.size(); ++k) {
        if (window.calls[k].writes) window.results[k].replicas_acked = count;
      }
      if (options_.url.kind == RedisUrl::Kind::sentinel) unconfirmed_is_unknown(window);
    }
    window.settled = true;
  } catch (const ConnectionError& e) {
    // Lost while waiting for WAIT: every write was applied but none is confirmed.
    if (window.wait && options_.url.kind == RedisUrl::Kind::sentinel) {
      unconfirmed_is_unknown(window);
    }
    lose_connection(e.what());
  }
}

void StandaloneClient::unconfirmed_is_unknown(InFlight& window) const {
  // Behind sentinels, a write the replicas did not confirm may sit on a master that a failover
  // is replacing, and vanish with it. With a request id it is safe to send again once the
  // sentinels name the master: the ledger there says whether it holds the write.
  const int wanted = options().wait_replicas;
  for (std::size_t k = 0; k < window.calls.size(); ++k) {
    CallResult& r = window.results[k];
    if (!window.calls[k].writes || !window.calls[k].idempotent || r.replicas_acked >= wanted ||
        r.state != CallResult::State::replied || r.reply.is_error()) {
      continue;
    }
    r.state = CallResult::State::unknown;
    r.error = fmt::format(
        "outcome unknown: {} of {} replicas acknowledged the write (a failover under way?)",
        std::max(r.replicas_acked, 0), wanted);
  }
}

void StandaloneClient::drain() {
  for (InFlight& window : in_flight_) {
    if (!window.settled) read_replies(window);
  }
}

void StandaloneClient::lose_connection(const std::string& why) {
  conn_.reset();
  for (InFlight& window : in_flight_) {
    if (window.settled) continue;
    for (std::size_t i = window.read; i < window.results.size(); ++i) {
      window.results[i].state = CallResult::State::unknown;
      window.results[i].error = why;
    }
    window.settled = true;
  }
}

void StandaloneClient::reload_missing_scripts(const std::vector<Call>& calls,
                                              std::vector<CallResult>& results) {
  std::vector<Call> again;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (results[i].state == CallResult::State::replied && results[i].reply.is_error() &&
        results[i].reply.error_kind() == ErrorReply::noscript) {
      again.push_back(calls[i]);
      where.push_back(i);
    }
  }
  if (again.empty()) return;
  // NOSCRIPT means the script did not run (server restarted, SCRIPT FLUSH), so loading it and
  // sending these calls again cannot apply anything twice. A failed load shows up as the retried
  // call's own error.
  std::vector<Call> loads;
  for (const Call& c : again) {
    bool seen = false;
    for (const Call& l : loads) seen = seen || l.args[2] == c.script->body;
    if (!seen) loads.push_back(Call::once({"SCRIPT", "LOAD", std::string(c.script->body)}));
  }
  send_raw(loads);
  print_info(
      fmt::format("the server had no copy of {} script(s) (NOSCRIPT); loaded them", loads.size()));
  std::vector<CallResult> retried = send_raw(again);
  for (std::size_t k = 0; k < again.size(); ++k) results[where[k]] = std::move(retried[k]);
}

}  // namespace stockctl
