#include "redis/cluster/router.h"

#include <fmt/format.h>

#include <poll.h>
#include <algorithm>

#include <optional>
#include <set>

#include "base/backoff.h"
#include "base/diagnostics.h"
#include "core/hash_slot.h"
#include "core/replication.h"
#include "redis/call.h"
#include "redis/cluster/redirect.h"
#include "redis/errors.h"
#include "redis/role.h"

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
      result.reply.error_kind() != ErrorReply::tryagain) {
    return;
  }
  result.reply.str = fmt::format(
      "TRYAGAIN slot {} is being migrated between two nodes (a migration is in progress) and "
      "this call's keys are split between them",
      key_slot(routing_key(call)));
}

}  // namespace

ClusterClient::ClusterClient(ConnectOptions seed, ClientOptions client_options,
                             ConnectionFactory open)
    : Client(client_options), seed_(std::move(seed)), open_(std::move(open)) {
  connect_retrying([this] { refresh(); });
}

ClusterClient::~ClusterClient() = default;

ClusterClient::Node& ClusterClient::node(const std::string& address) {
  auto it = nodes_.find(address);
  if (it != nodes_.end()) return it->second;
  auto parsed = parse_address(address);
  if (!parsed) throw ConnectionError(fmt::format("bad cluster node address '{}'", address));
  ConnectOptions options = seed_;
  options.url.kind = RedisUrl::Kind::tcp;
  options.url.host = parsed->first;
  options.url.port = parsed->second;
  options.url.db = 0;  // a cluster has only database 0
  std::unique_ptr<Connection> conn = open_(options);
  Node& added = nodes_[address];
  added.conn = std::move(conn);
  if (auto planned = wait_for_.find(address); planned != wait_for_.end()) {
    added.wait_for = planned->second;
    if (added.wait_for == 0) confirm_unreplicated(address, added);
  }
  return added;
}

void ClusterClient::refresh() {
  // Ask the seed first, then every node we know: any live node knows the whole map.
  std::vector<std::string> candidates{describe_endpoint(seed_.url)};
  for (const auto& [address, conn] : nodes_) candidates.push_back(address);
  for (const std::string& s : slots_.addresses()) candidates.push_back(s);
  std::set<std::string> tried;
  std::string last_error = "no node to ask";
  for (const std::string& address : candidates) {
    if (!tried.insert(address).second) continue;
    try {
      Reply reply = node(address).conn->command({"CLUSTER", "SLOTS"});
      if (reply.is_error()) {
        last_error = fmt::format("{}: {}", address, reply.str);
        if (reply.error_kind() == ErrorReply::cluster_disabled) {
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
      SlotMap fresh;
      std::map<std::string, int> replicas;
      for (const Reply& range : reply.elements) {
        auto first = range.elements.at(0).integer, last = range.elements.at(1).integer;
        std::string primary = host_of(range.elements.at(2));
        // The entries after the primary are its replicas that are not failed.
        replicas[primary] = static_cast<int>(range.elements.size()) - 3;
        for (auto s = std::max(first, 0LL); s <= last && s < kClusterSlots; ++s) {
          fresh.set(static_cast<int>(s), primary);
        }
      }
      slots_ = std::move(fresh);
      plan_waits(replicas);
      print_info(fmt::format("cluster map from {}: {} ranges", address, reply.elements.size()));
      return;
    } catch (const FatalConnectionError&) {
      throw;  // every node would say the same
    } catch (const ConnectionError& e) {
      fail_node(address, e.what());
      last_error = e.what();
    } catch (const std::out_of_range&) {
      last_error = fmt::format("{}: unexpected CLUSTER SLOTS reply", address);
    }
  }
  throw ConnectionError(fmt::format("cannot discover the cluster: {}", last_error));
}

void ClusterClient::plan_waits(const std::map<std::string, int>& replicas) {
  const int asked = options().wait_replicas;
  replicas_expected_ = std::any_of(replicas.begin(), replicas.end(),
                                   [](const auto& entry) { return entry.second > 0; });
  wait_for_.clear();
  for (const auto& [primary, attached] : replicas) {
    wait_for_[primary] = replicas_to_wait_for(asked, attached);
  }
  for (auto& [address, n] : nodes_) {
    auto planned = wait_for_.find(address);
    const int before = n.wait_for;
    n.wait_for = planned == wait_for_.end() ? 0 : planned->second;
    // A connection that owes replies cannot ask ROLE now: it keeps what the last answer said
    // rather than trust a map that may not list a replica yet (waiting for one that is gone
    // reports a write unconfirmed; not waiting for one that is there can lose it).
    if (planned != wait_for_.end() && n.wait_for == 0 && !confirm_unreplicated(address, n)) {
      n.wait_for = before;
    }
  }
}

bool ClusterClient::confirm_unreplicated(const std::string& address, Node& n) {
  // Only a primary the default would wait for if it had a replica, and only on a connection
  // with nothing owed, so that ROLE's reply is the next one.
  if (options().wait_replicas != kWaitReplicasAuto) return true;
  if (!n.owed.empty()) return false;
  // CLUSTER SLOTS leaves out a replica whose replication offset has not reached the gossip yet
  // (a fresh cluster, every replica of it: a rebalance run right after the cluster was made
  // waited for none, and a failover lost its receive): the primary's own ROLE says whether one
  // is attached. A cluster with no replica at all pays one ROLE per primary for that.
  int attached = 0;
  try {
    attached = ask_role(*n.conn).attached();
  } catch (const ConnectionError&) {
    return false;  // the next call on it finds the broken connection
  }
  n.wait_for = replicas_to_wait_for(kWaitReplicasAuto, attached);
  if (warn_unreplicated(kWaitReplicasAuto, attached, replicas_expected_) &&
      warned_.insert(address).second) {
    print_warning(fmt::format(
        "cluster primary {} has no replica attached: its writes are not copied anywhere, and "
        "losing it loses them; writing to it without waiting for replicas",
        address));
  }
  return true;
}

void ClusterClient::note_unconfirmed(Window& window, std::size_t index,
                                     const std::string& written_to) const {
  const CallResult& r = window.results[index];
  if (!window.calls[index].resend_unconfirmed || r.replicas_acked >= r.replicas_wanted ||
      r.state != CallResult::State::replied || r.reply.is_error()) {
    return;
  }
  window.unconfirmed.push_back(Unconfirmed{index, written_to});
  window.stale = true;  // has a failover named another primary? The map is read anew
}

void ClusterClient::resend_where_replaced(Window& window) const {
  for (const Unconfirmed& u : window.unconfirmed) {
    CallResult& r = window.results[u.index];
    const int slot = key_slot(routing_key(window.calls[u.index]));
    const std::string& primary = slots_[slot];
    if (r.state != CallResult::State::replied || primary == u.written_to) continue;
    r.state = CallResult::State::unknown;
    // describe() puts "outcome unknown: " in front when no retry settles it.
    r.error = fmt::format(
        "{} of {} replicas acknowledged the write on {}, and the slot map now names {} as the "
        "primary of slot {} (a failover)",
        std::max(r.replicas_acked, 0), r.replicas_wanted, u.written_to,
        primary.empty() ? std::string("no node") : primary, slot);
  }
  window.unconfirmed.clear();
}

void ClusterClient::recover() noexcept {
  try {
    // CLUSTER SLOTS goes on the same connections: their replies owed come first.
    drain();
    refresh();
  } catch (const std::exception& e) {
    print_info(fmt::format("cluster rediscovery failed: {}", e.what()));
  }
}

std::vector<std::string> ClusterClient::primaries() {
  if (int slot = slots_.first_unserved(); slot >= 0) {
    throw ConnectionError(
        fmt::format("the cluster serves no slot {}: its keys cannot be read", slot));
  }
  std::vector<std::string> unique = slots_.addresses();
  std::sort(unique.begin(), unique.end());
  return unique;
}

std::string ClusterClient::slot_owner(int slot) {
  return slot >= 0 && slot < kClusterSlots ? slots_[slot] : std::string();
}

bool ClusterClient::waits_for_replicas() const {
  return std::any_of(wait_for_.begin(), wait_for_.end(),
                     [](const auto& planned) { return planned.second > 0; });
}

Reply ClusterClient::call_on(const std::string& address, const Call& call) {
  drain();  // this reply must be the next one on that connection
  Backoff backoff(options().retry_timeout_ms, 20, 500);
  for (;;) {
    try {
      return node(address).conn->command(script_argv(call));
    } catch (const ConnectionError& e) {
      fail_node(address, e.what());
      // SCAN cursors are stateless, so the same call may go to a node that comes back; one
      // replaced by a promoted replica never does, and the caller gives up after the retries.
      if (!backoff.pause()) {
        throw ConnectionError(fmt::format("{}: {}", address, e.what()));
      }
    }
  }
}

void ClusterClient::start(std::vector<Call> calls) { open(std::move(calls)); }

std::vector<CallResult> ClusterClient::finish() {
  // Windows that run() opened were taken back before it returned: the oldest was started.
  complete(windows_.oldest().id);
  Window window = windows_.take_oldest();
  describe_tryagain(window);
  if (window.stale) recover();
  resend_where_replaced(window);
  return settle(window.calls, std::move(window.results), window.started);
}

std::vector<CallResult> ClusterClient::send(const std::vector<Call>& calls) {
  // One attempt, sent behind whatever windows are already on the wire.
  complete(open(calls));
  Window window = windows_.take_newest();
  describe_tryagain(window);
  if (window.stale) recover();
  resend_where_replaced(window);
  return std::move(window.results);
}

std::uint64_t ClusterClient::open(std::vector<Call> calls) {
  auto script = std::find_if(calls.begin(), calls.end(), [](const Call& c) { return c.script; });
  if (!announced_ && script != calls.end()) {
    announced_ = true;
    library_ = script->script->library;
    print_info(
        fmt::format("scripts are called with FCALL (Redis Functions, library {}) on "
                    "every node that runs them, else with EVALSHA",
                    script->script->library->name));
  }
  Window& window = windows_.open();
  const std::uint64_t id = window.id;
  window.started = Clock::now();
  window.results.resize(calls.size());
  window.hops.assign(calls.size(), 0);
  window.calls = std::move(calls);
  unreachable_.clear();
  // Each key's node by its index in the slot map, looked up once per node and window rather
  // than by address for every call (nodes_ only grows while the window is appended).
  std::vector<Node*> by_node(slots_.node_count(), nullptr);
  for (std::size_t i = 0; i < window.calls.size(); ++i) {
    const std::uint16_t at = slots_.node_index(key_slot(routing_key(window.calls[i])));
    if (Node* known = by_node[at]) {
      enqueue(*known, window, i, false);
    } else {
      by_node[at] = dispatch(id, i, slots_.address(at), false);
    }
  }
  // Written now, not when the first reply is wanted, so that every node starts at once.
  flush_all();
  return id;
}

ClusterClient::Node* ClusterClient::dispatch(std::uint64_t id, std::size_t index,
                                             const std::string& address, bool asking) {
  Window& window = windows_.at(id);
  Node* target = nullptr;
  Unreachable why{"no node serves this slot (cluster down?)", false};
  if (auto known = unreachable_.find(address); known != unreachable_.end()) {
    why = known->second;
  } else if (!address.empty()) {
    try {
      target = &node(address);
    } catch (const ConnectionError& e) {
      why = Unreachable{e.what(), dynamic_cast<const FatalConnectionError*>(&e) != nullptr};
      unreachable_[address] = why;
    }
  }
  if (target == nullptr) {
    CallResult& result = window.results[index];
    result = CallResult{};
    result.error = why.why;
    result.hopeless = why.fatal;
    window.stale = true;  // not sent: the map may name a node that is gone
    return nullptr;
  }
  enqueue(*target, window, index, asking);
  return target;
}

void ClusterClient::enqueue(Node& n, Window& window, std::size_t index, bool asking) {
  const std::uint64_t id = window.id;
  const Call& call = window.calls[index];
  if (asking) {
    n.conn->append({"ASKING"});
    n.owed.push_back(Owed{Owed::Kind::asking, id, index, 0, false, n.appended++});
  }
  append_call(*n.conn, call);
  n.owed.push_back(Owed{Owed::Kind::call, id, index, window.hops[index], asking, n.appended++});
  if (call.writes && n.wait_for > 0) {
    n.unwaited.push_back(Unwaited{id, index, window.hops[index], n.wait_for});
  }
  n.dirty = true;
  ++window.owed;
}

void ClusterClient::flush_all() {
  std::vector<std::pair<std::string, std::string>> broken;  // node, why
  for (auto& [address, n] : nodes_) {
    if (!n.dirty) continue;
    n.dirty = false;
    if (!n.unwaited.empty()) {
      // WAIT counts the replicas holding every write this connection made so far.
      append_wait(*n.conn, n.unwaited.front().wanted);
      for (const Unwaited& w : n.unwaited) ++windows_.at(w.window).owed;
      n.owed.push_back(Owed{Owed::Kind::wait, 0, 0, 0, false, n.appended++});
      n.waits.push_back(std::move(n.unwaited));
      n.unwaited.clear();
    }
    try {
      n.conn->flush();
      n.heard = Clock::now();
    } catch (const ConnectionError& e) {
      // Part of it may have gone out: what this node owes has an unknown outcome.
      broken.emplace_back(address, e.what());
    }
  }
  for (const auto& [address, why] : broken) fail_node(address, why);
}

void ClusterClient::complete(std::uint64_t id) {
  while (windows_.at(id).owed > 0 && pump()) {
  }
}

void ClusterClient::drain() {
  auto owing = [this] {
    return std::any_of(nodes_.begin(), nodes_.end(),
                       [](const auto& entry) { return !entry.second.owed.empty(); });
  };
  while (owing() && pump()) {
  }
}

bool ClusterClient::pump() {
  flush_all();
  unreachable_.clear();
  std::vector<std::string> owing;
  for (const auto& [address, n] : nodes_) {
    if (!n.owed.empty()) owing.push_back(address);
  }
  if (owing.empty()) return false;
  bool progress = false;
  for (const std::string& address : owing) progress = read_arrived(address) || progress;
  if (progress) return true;
  // Nothing had arrived: wait for the first node to answer, or for the oldest silence to reach
  // --timeout (each node's silence counts from its last write or reply; a node whose next
  // reply is a WAIT's may hold it --wait-timeout more, on purpose).
  std::vector<pollfd> fds;
  auto now = Clock::now();
  long long wait_ms = seed_.timeout_ms + options().wait_timeout_ms;
  std::vector<std::pair<std::string, long long>> silent;  // node, its limit
  for (const std::string& address : owing) {
    auto it = nodes_.find(address);
    if (it == nodes_.end()) continue;  // broke while reading
    const Node& n = it->second;
    if (n.owed.empty()) continue;
    const bool waiting = n.owed.front().kind == Owed::Kind::wait;
    const long long limit_ms = seed_.timeout_ms + (waiting ? options().wait_timeout_ms : 0);
    const long long quiet_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - n.heard).count();
    if (quiet_ms >= limit_ms) {
      silent.emplace_back(address, limit_ms);
      continue;
    }
    wait_ms = std::min(wait_ms, limit_ms - quiet_ms);
    fds.push_back(pollfd{n.conn->fd(), POLLIN, 0});
  }
  for (const auto& [address, limit_ms] : silent) {
    fail_node(address, timeout_error("talking to", address, limit_ms).what());
  }
  if (fds.empty() || !silent.empty()) return true;
  // EINTR (a signal) only ends this wait early: the next round looks again.
  ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
  return true;
}

bool ClusterClient::read_arrived(const std::string& address) {
  auto it = nodes_.find(address);
  if (it == nodes_.end()) return false;
  Node& n = it->second;
  bool any = false;
  try {
    while (!n.owed.empty()) {
      std::optional<Reply> reply = n.conn->read_ready();
      if (!reply) break;
      if (!any) n.heard = Clock::now();  // once per batch of replies that arrived together
      any = true;
      const Owed owed = n.owed.front();
      n.owed.pop_front();
      handle(address, owed, std::move(*reply));
    }
  } catch (const ConnectionError& e) {
    fail_node(address, e.what());
    return true;  // what it owed is settled: that is progress too
  }
  return any;
}

void ClusterClient::handle(const std::string& address, const Owed& owed, Reply reply) {
  switch (owed.kind) {
    case Owed::Kind::asking:
    case Owed::Kind::load:
      return;  // +OK; a failed load shows as the resent call's own NOSCRIPT
    case Owed::Kind::load_library:
      // Refused (an ACL, ...): the resent call misses the library again and goes as EVALSHA.
      if (!library_loaded(reply)) {
        nodes_.at(address).conn->set_script_calls(ScriptCalls::evalsha);
      } else {
        print_info(fmt::format("{}: loaded the Functions library {}", address,
                               library_ ? library_->name : std::string_view("of the scripts")));
      }
      return;
    case Owed::Kind::wait: {
      const int count = reply.type == Reply::Type::integer ? static_cast<int>(reply.integer) : 0;
      std::deque<std::vector<Unwaited>>& waits = nodes_.at(address).waits;
      const std::vector<Unwaited> covers = std::move(waits.front());
      waits.pop_front();
      for (const Unwaited& w : covers) {
        Window& window = windows_.at(w.window);
        --window.owed;
        // A call redirected since has its answer, and its count, from another node.
        if (window.hops[w.index] != w.hop) continue;
        window.results[w.index].replicas_acked = count;
        window.results[w.index].replicas_wanted = w.wanted;
        note_unconfirmed(window, w.index, address);
      }
      return;
    }
    case Owed::Kind::call:
      break;
  }
  Window& window = windows_.at(owed.window);
  CallResult& result = window.results[owed.index];
  // What an earlier attempt left (a redirect's reply, a lost node's error) is replaced field by
  // field: no CallResult is built and destroyed per reply.
  result.reply = std::move(reply);
  result.state = CallResult::State::replied;
  result.error.clear();
  result.replicas_acked = -1;
  result.replicas_wanted = 0;
  result.hopeless = false;
  --window.owed;
  follow(window, owed, address);
}

bool ClusterClient::follow(Window& window, const Owed& owed, const std::string& address) {
  const CallResult& result = window.results[owed.index];
  if (!result.reply.is_error()) return false;
  const Call& call = window.calls[owed.index];
  const auto redirect = parse_redirect(result.reply.str);
  const ScriptMiss miss = redirect ? ScriptMiss::none : script_miss(call, result);
  if (!redirect && miss == ScriptMiss::none) return false;
  if (window.hops[owed.index] >= kMaxRedirects) {
    // A key that keeps being redirected means a cluster in flux: report the last answer.
    window.results[owed.index].reply.str +=
        fmt::format(" (gave up after {} redirects for key {})", kMaxRedirects, routing_key(call));
    return false;
  }
  ++window.hops[owed.index];
  if (miss != ScriptMiss::none) {
    // This node lacks the library or the script (new primary, restart, flush), or refuses
    // Functions: load what it needs there and resend, which is safe because the call did not
    // run. One load serves every call sent before it.
    Node& n = nodes_.at(address);
    if (miss == ScriptMiss::library && n.conn->script_calls() == ScriptCalls::functions) {
      if (n.library_loaded == 0 || n.library_loaded < owed.seq) {
        n.conn->append(load_library_argv(*call.script));
        n.library_loaded = n.appended;
        n.owed.push_back(Owed{Owed::Kind::load_library, 0, 0, 0, false, n.appended++});
      }
      dispatch(owed.window, owed.index, address, owed.asking);
      return true;
    }
    if (n.conn->script_calls() == ScriptCalls::functions) {
      n.conn->set_script_calls(ScriptCalls::evalsha);
      print_info(
          fmt::format("{}: the node does not run our Functions ({}); scripts are called "
                      "there with EVALSHA",
                      address, result.reply.str));
    }
    auto loaded = n.loaded.find(call.script);
    if (loaded == n.loaded.end() || loaded->second < owed.seq) {
      n.conn->append({"SCRIPT", "LOAD", std::string(call.script->body)});
      n.loaded[call.script] = n.appended;
      n.owed.push_back(Owed{Owed::Kind::load, 0, 0, 0, false, n.appended++});
    }
    dispatch(owed.window, owed.index, address, owed.asking);  // ASKING again if it needed it
    return true;
  }
  if (!redirect->ask) {
    // The slot has moved for good: remember it, and refresh the whole map afterwards.
    slots_.set(redirect->slot, redirect->address());
    window.stale = true;
  }
  // ASK: the slot is migrating and this key is already on the importing node: ask there once,
  // without changing the map.
  dispatch(owed.window, owed.index, redirect->address(), redirect->ask);
  return true;
}

void ClusterClient::fail_node(const std::string& address, const std::string& why) {
  auto it = nodes_.find(address);
  if (it == nodes_.end()) return;
  for (const std::vector<Unwaited>& covers : it->second.waits) {
    for (const Unwaited& w : covers) wait_lost(windows_.at(w.window), w, why);
  }
  for (const Owed& owed : it->second.owed) {
    if (owed.kind != Owed::Kind::call) continue;
    Window& window = windows_.at(owed.window);
    CallResult& result = window.results[owed.index];
    result = CallResult{};
    result.state = CallResult::State::unknown;
    result.error = why;
    --window.owed;
    window.stale = true;
  }
  // Writes appended and not yet sent were not applied, but their calls are owed above.
  nodes_.erase(it);
}

void ClusterClient::wait_lost(Window& window, const Unwaited& w, const std::string& why) {
  --window.owed;
  // A call redirected since has its answer, and its count, from another node.
  if (window.hops[w.index] != w.hop) return;
  CallResult& r = window.results[w.index];
  r.replicas_wanted = w.wanted;  // none acknowledged that we know of (replicas_acked -1)
  if (!window.calls[w.index].resend_unconfirmed || r.state != CallResult::State::replied ||
      r.reply.is_error()) {
    return;
  }
  // Its primary may be gone with the write: sent again within --retry-timeout, it reaches the
  // primary the map names then (the old one back, or the replica promoted), whose ledger
  // decides.
  r.state = CallResult::State::unknown;
  r.error = why;
  window.stale = true;
}

void ClusterClient::describe_tryagain(Window& window) {
  for (std::size_t i = 0; i < window.calls.size(); ++i) {
    explain_tryagain(window.calls[i], window.results[i]);
  }
}

}  // namespace stockctl
