#include "redis/standalone_client.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/diagnostics.h"
#include "redis/errors.h"
#include "scripts/registry.h"

namespace stockctl {

StandaloneClient::StandaloneClient(ConnectOptions options, ClientOptions client_options)
    : Client(client_options),
      options_(std::move(options)),
      conn_(std::make_unique<Connection>(options_)) {}

std::vector<CallResult> StandaloneClient::send(const std::vector<Call>& calls) {
  std::vector<CallResult> results = send_raw(calls);
  reload_missing_scripts(calls, results);
  return results;
}

std::vector<CallResult> StandaloneClient::send_raw(const std::vector<Call>& calls) {
  std::vector<CallResult> results(calls.size());
  if (!conn_) {
    // Nothing of this batch was sent yet, so reconnecting cannot apply anything twice.
    try {
      conn_ = std::make_unique<Connection>(options_);
    } catch (const ConnectionError& e) {
      for (auto& r : results) r.error = fmt::format("not applied: {}", e.what());
      return results;
    }
  }
  const int replicas = options().wait_replicas;
  const bool wait = replicas > 0 &&
                    std::any_of(calls.begin(), calls.end(), [](const Call& c) { return c.writes; });
  std::size_t i = 0;
  try {
    for (const Call& c : calls) append_call(*conn_, c);
    // WAIT counts the replicas that have every write this connection made so far.
    if (wait) {
      conn_->append({"WAIT", std::to_string(replicas), std::to_string(options().wait_timeout_ms)});
    }
    for (; i < calls.size(); ++i) {
      results[i].reply = conn_->read();
      results[i].state = CallResult::State::replied;
    }
    if (wait) {
      Reply acked = conn_->read();
      int count = acked.type == Reply::Type::integer ? static_cast<int>(acked.integer) : 0;
      for (std::size_t k = 0; k < calls.size(); ++k) {
        if (calls[k].writes) results[k].replicas_acked = count;
      }
    }
  } catch (const ConnectionError& e) {
    conn_.reset();
    for (; i < calls.size(); ++i) {
      results[i].state = CallResult::State::unknown;
      results[i].error = fmt::format("outcome unknown: {}", e.what());
    }
  }
  return results;
}

void StandaloneClient::reload_missing_scripts(const std::vector<Call>& calls,
                                              std::vector<CallResult>& results) {
  std::vector<Call> again;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (results[i].state == CallResult::State::replied &&
        results[i].reply.error_code() == "NOSCRIPT") {
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
    if (!seen) loads.push_back(Call{nullptr, {"SCRIPT", "LOAD", std::string(c.script->body)}});
  }
  send_raw(loads);
  print_info(
      fmt::format("the server had no copy of {} script(s) (NOSCRIPT); loaded them", loads.size()));
  std::vector<CallResult> retried = send_raw(again);
  for (std::size_t k = 0; k < again.size(); ++k) results[where[k]] = std::move(retried[k]);
}

}  // namespace stockctl
