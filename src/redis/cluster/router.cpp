#include "redis/cluster/router.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/backoff.h"
#include "base/diagnostics.h"
#include "redis/call.h"
#include "redis/cluster/redirect.h"
#include "redis/cluster/slot.h"
#include "redis/errors.h"

namespace stockctl {
namespace {

// A key that keeps being redirected means a cluster in flux; past this many hops in one send we
// report the last answer instead of looping.
constexpr int kMaxRedirects = 16;

const std::string& routing_key(const Call& call) {
  // Script calls carry their keys first; plain commands name their key after the command.
  return call.script ? call.args.at(0) : call.args.at(1);
}

// TRYAGAIN from a cluster means that the call's keys are split between the two nodes of a slot
// being migrated; Redis's own text ("Multiple keys request during rehashing of slot") names
// neither the slot nor the cause. The code stays first, so the reply is still retried.
void explain_tryagain(const Call& call, CallResult& result) {
  if (result.state != CallResult::State::replied || !result.reply.is_error() ||
      result.reply.error_code() != "TRYAGAIN") {
    return;
  }
  result.reply.str = fmt::format(
      "TRYAGAIN slot {} is being migrated between two nodes (a migration is in progress) and "
      "this call's keys are split between them",
      key_slot(routing_key(call)));
}

}  // namespace

/// Where each pending call goes in one round of sends, and whether it needs ASKING first.
struct ClusterClient::Attempt {
  std::vector<std::size_t> pending;
  std::vector<std::string> target;
  std::vector<bool> asking;
  bool map_stale = false;
};

ClusterClient::ClusterClient(ConnectOptions seed, ClientOptions client_options)
    : Client(client_options), seed_(std::move(seed)), slots_(kClusterSlots) {
  connect_retrying([this] { refresh(); });
}

Connection& ClusterClient::node(const std::string& address) {
  auto it = nodes_.find(address);
  if (it != nodes_.end() && it->second) return *it->second;
  auto parsed = parse_address(address);
  if (!parsed) throw ConnectionError(fmt::format("bad cluster node address '{}'", address));
  ConnectOptions options = seed_;
  options.url.kind = RedisUrl::Kind::tcp;
  options.url.host = parsed->first;
  options.url.port = parsed->second;
  options.url.db = 0;  // a cluster has only database 0
  auto conn = std::make_unique<Connection>(options);
  Connection& ref = *conn;
  nodes_[address] = std::move(conn);
  return ref;
}

void ClusterClient::refresh() {
  // Ask the seed first, then every node we know: any live node knows the whole map.
  std::vector<std::string> candidates{describe_endpoint(seed_.url)};
  for (const auto& [address, conn] : nodes_) candidates.push_back(address);
  for (const std::string& s : slots_) {
    if (!s.empty()) candidates.push_back(s);
  }
  std::set<std::string> tried;
  std::string last_error = "no node to ask";
  for (const std::string& address : candidates) {
    if (!tried.insert(address).second) continue;
    try {
      Reply reply = node(address).command({"CLUSTER", "SLOTS"});
      if (reply.is_error()) {
        last_error = fmt::format("{}: {}", address, reply.str);
        if (reply.str.find("cluster support disabled") != std::string::npos) {
          throw FatalConnectionError(fmt::format(
              "--cluster: {} is not a cluster node (cluster support disabled)", address));
        }
        continue;
      }
      auto host_of = [&](const Reply& entry) {
        std::string host = entry.elements.at(0).str;
        // An empty or "?" host means "the address you reached me at".
        if (host.empty() || host == "?") host = parse_address(address)->first;
        return fmt::format("{}:{}", host, entry.elements.at(1).integer);
      };
      std::vector<std::string> fresh(kClusterSlots);
      for (const Reply& range : reply.elements) {
        auto first = range.elements.at(0).integer, last = range.elements.at(1).integer;
        std::string primary = host_of(range.elements.at(2));
        for (auto s = first; s <= last && s < kClusterSlots; ++s) fresh[s] = primary;
      }
      slots_.swap(fresh);
      print_info(fmt::format("cluster map from {}: {} ranges", address, reply.elements.size()));
      return;
    } catch (const FatalConnectionError&) {
      throw;  // every node would say the same
    } catch (const ConnectionError& e) {
      nodes_.erase(address);
      last_error = e.what();
    } catch (const std::out_of_range&) {
      last_error = fmt::format("{}: unexpected CLUSTER SLOTS reply", address);
    }
  }
  throw ConnectionError(fmt::format("cannot discover the cluster: {}", last_error));
}

void ClusterClient::recover() noexcept {
  try {
    refresh();
  } catch (const std::exception& e) {
    print_info(fmt::format("cluster rediscovery failed: {}", e.what()));
  }
}

std::vector<std::string> ClusterClient::primaries() {
  std::set<std::string> unique;
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot].empty()) {
      throw ConnectionError(
          fmt::format("the cluster serves no slot {}: its keys cannot be read", slot));
    }
    unique.insert(slots_[slot]);
  }
  return {unique.begin(), unique.end()};
}

Reply ClusterClient::call_on(const std::string& address, const Call& call) {
  Backoff backoff(options().retry_timeout_ms, 20, 500);
  for (;;) {
    try {
      return node(address).command(script_argv(call));
    } catch (const ConnectionError& e) {
      nodes_.erase(address);
      // SCAN cursors are stateless, so the same call may go to a node that comes back; one
      // replaced by a promoted replica never does, and the caller gives up after the retries.
      if (!backoff.pause()) {
        throw ConnectionError(fmt::format("{}: {}", address, e.what()));
      }
    }
  }
}

std::string ClusterClient::route(const Call& call) const {
  return slots_[key_slot(routing_key(call))];
}

void ClusterClient::send_to_nodes(const std::vector<Call>& calls, Attempt& attempt,
                                  std::vector<CallResult>& results) {
  // Group by node, keeping input order within each node.
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t k = 0; k < attempt.pending.size(); ++k) {
    groups[attempt.target[k]].push_back(k);
  }
  const int replicas = options().wait_replicas;
  std::map<std::string, bool> waiting;
  std::map<std::string, std::string> failed;  // node -> why it could not be written to
  std::set<std::string> refused;              // nodes that refused our credentials
  // Append to every node first, so that all of them work while we read.
  for (auto& [address, members] : groups) {
    try {
      if (address.empty()) throw ConnectionError("no node serves this slot (cluster down?)");
      Connection& conn = node(address);
      bool writes = false;
      for (std::size_t k : members) {
        const Call& call = calls[attempt.pending[k]];
        if (attempt.asking[k]) conn.append({"ASKING"});
        append_call(conn, call);
        writes = writes || call.writes;
      }
      waiting[address] = writes && replicas > 0;
      if (waiting[address]) append_wait(conn);
      // Written now, not when the first reply is read, so that every node works at once.
      try {
        conn.flush();
      } catch (const ConnectionError&) {
        // Part of it may have gone out: the first read below fails the same way and reports
        // these calls' outcome as unknown, which is what it is.
      }
    } catch (const ConnectionError& e) {
      failed[address] = e.what();
      if (dynamic_cast<const FatalConnectionError*>(&e) != nullptr) refused.insert(address);
      nodes_.erase(address);
      attempt.map_stale = true;
    }
  }
  for (auto& [address, members] : groups) {
    if (auto f = failed.find(address); f != failed.end()) {
      for (std::size_t k : members) {
        CallResult& r = results[attempt.pending[k]];
        r = CallResult{};
        r.error = f->second;
        r.hopeless = refused.count(address) > 0;
      }
      continue;
    }
    Connection& conn = *nodes_[address];
    std::size_t read = 0;
    try {
      for (; read < members.size(); ++read) {
        std::size_t k = members[read];
        if (attempt.asking[k]) conn.read();  // ASKING's +OK
        CallResult& r = results[attempt.pending[k]];
        r = CallResult{};
        r.reply = conn.read();
        r.state = CallResult::State::replied;
      }
      if (waiting[address]) {
        const int count = read_wait(conn);
        for (std::size_t k : members) {
          if (calls[attempt.pending[k]].writes) results[attempt.pending[k]].replicas_acked = count;
        }
      }
    } catch (const ConnectionError& e) {
      nodes_.erase(address);
      attempt.map_stale = true;
      for (; read < members.size(); ++read) {
        CallResult& r = results[attempt.pending[members[read]]];
        r = CallResult{};
        r.state = CallResult::State::unknown;
        r.error = e.what();
      }
    }
  }
}

bool ClusterClient::follow(const Call& call, const CallResult& result, const std::string& sent_to,
                           bool was_asking, Attempt& next, std::size_t index) {
  if (result.state != CallResult::State::replied || !result.reply.is_error()) return false;
  const std::string& text = result.reply.str;
  if (auto redirect = parse_redirect(text)) {
    if (redirect->ask) {
      // The slot is migrating: this key is already on the importing node. Ask there once,
      // without changing the map.
      next.pending.push_back(index);
      next.target.push_back(redirect->address());
      next.asking.push_back(true);
    } else {
      // The slot has moved for good: remember it, and refresh the whole map afterwards.
      slots_[redirect->slot] = redirect->address();
      next.map_stale = true;
      next.pending.push_back(index);
      next.target.push_back(redirect->address());
      next.asking.push_back(false);
    }
    return true;
  }
  if (result.reply.error_code() == "NOSCRIPT" && call.script) {
    // This node has not seen the script (new primary, restart): load it there and resend,
    // which is safe because NOSCRIPT means it did not run.
    try {
      node(sent_to).command({"SCRIPT", "LOAD", std::string(call.script->body)});
    } catch (const ConnectionError&) {
      return false;
    }
    next.pending.push_back(index);
    next.target.push_back(sent_to);
    next.asking.push_back(was_asking);  // a call that needed ASKING needs it again
    return true;
  }
  return false;
}

std::vector<CallResult> ClusterClient::send(const std::vector<Call>& calls) {
  std::vector<CallResult> results(calls.size());
  Attempt attempt;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    attempt.pending.push_back(i);
    attempt.target.push_back(route(calls[i]));
    attempt.asking.push_back(false);
  }
  bool stale = false;
  for (int hop = 0; hop <= kMaxRedirects && !attempt.pending.empty(); ++hop) {
    send_to_nodes(calls, attempt, results);
    stale = stale || attempt.map_stale;
    Attempt next;
    for (std::size_t k = 0; k < attempt.pending.size(); ++k) {
      std::size_t index = attempt.pending[k];
      follow(calls[index], results[index], attempt.target[k], attempt.asking[k], next, index);
    }
    stale = stale || next.map_stale;
    attempt = std::move(next);
  }
  for (std::size_t index : attempt.pending) {
    results[index].reply.str += fmt::format(" (gave up after {} redirects for key {})",
                                            kMaxRedirects, routing_key(calls[index]));
  }
  for (std::size_t i = 0; i < calls.size(); ++i) explain_tryagain(calls[i], results[i]);
  if (stale) recover();
  return results;
}

}  // namespace stockctl
