#include "redis/standalone_client.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "core/info_text.h"
#include "core/replication.h"
#include "redis/call.h"
#include "redis/errors.h"
#include "redis/role.h"
#include "redis/url.h"

namespace stockctl {

StandaloneClient::StandaloneClient(ConnectOptions options, ClientOptions client_options,
                                   ConnectionFactory open)
    : Client(client_options), options_(std::move(options)), open_(std::move(open)) {
  connect_retrying([this] { connect(); });
}

std::vector<CallResult> StandaloneClient::send(const std::vector<Call>& calls) {
  std::vector<CallResult> results = send_raw(calls);
  reload_missing_scripts(calls, results);
  return results;
}

std::string StandaloneClient::node_address(const std::string& node) const {
  if (!node.empty()) return node;
  return conn_ ? conn_->where() : describe_endpoint(options_.url);
}

void StandaloneClient::recover() noexcept {
  // A READONLY or a lost connection behind sentinels means the master may have moved. The
  // windows still on the wire are read first (their results stay theirs); then the next
  // connection asks the sentinels again.
  if (options_.url.kind != RedisUrl::Kind::sentinel || !conn_) return;
  drain();
  conn_.reset();
}

void StandaloneClient::start(std::vector<Call> calls) { transmit(std::move(calls), true); }

std::vector<CallResult> StandaloneClient::finish() {
  if (!in_flight_.oldest().settled) read_replies(in_flight_.oldest());
  InFlight window = in_flight_.take_oldest();
  judge_unconfirmed(window);
  if (reload_missing_scripts(window.calls, window.results)) {
    // The windows sent after this one missed the scripts too (reloading read them all): their
    // calls go again now, before anything newer, so that they apply in input order.
    for (InFlight& later : in_flight_) reload_missing_scripts(later.calls, later.results);
  }
  return settle(window.calls, std::move(window.results), window.started);
}

std::vector<CallResult> StandaloneClient::send_raw(const std::vector<Call>& calls) {
  drain();
  InFlight& window = transmit(calls, false);
  if (!window.settled) read_replies(window);
  judge_unconfirmed(window);
  return in_flight_.take_newest().results;
}

StandaloneClient::InFlight& StandaloneClient::transmit(std::vector<Call> calls, bool pipelined) {
  if (master_moved_) {
    // What is still on the wire went to the replaced master: read (and judge) it, then ask the
    // sentinels for the new one.
    drain();
    conn_.reset();
    master_moved_ = false;
  }
  InFlight& window = in_flight_.open();
  window.results.resize(calls.size());
  window.calls = std::move(calls);
  if (!conn_) {
    // Nothing of this window was sent yet, so reconnecting cannot apply anything twice.
    try {
      connect();
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
  window.wait = wait_for_ > 0 && std::any_of(window.calls.begin(), window.calls.end(),
                                             [](const Call& c) { return c.writes; });
  for (std::size_t k = 0; window.wait && k < window.calls.size(); ++k) {
    if (window.calls[k].writes) window.results[k].replicas_wanted = wait_for_;
  }
  window.conn_serial = conn_serial_;
  window.beside = window.wait && pipelined && can_wait_beside();
  announce_script_calls(window.calls);
  try {
    for (const Call& c : window.calls) append_call(*conn_, c);
    if (window.wait && !window.beside) append_wait(*conn_, wait_for_);
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
      window.server = conn_->where();
      const int count = window.beside ? wait_beside() : read_wait(*conn_);
      for (std::size_t k = 0; k < window.calls.size(); ++k) {
        if (window.calls[k].writes) window.results[k].replicas_acked = count;
      }
    }
    window.settled = true;
    confirm_master(window);
  } catch (const ConnectionError& e) {
    // Lost while waiting for WAIT: every write was applied but none is confirmed.
    if (window.wait && options_.url.kind == RedisUrl::Kind::sentinel) {
      unconfirmed_is_unknown(window);
    }
    lose_connection(e.what());
  }
}

namespace {

// The mark the side connection writes before its WAIT: a key of stockctl's own, set and
// deleted in one transaction, so that no one ever sees it and nothing is left behind, while the
// transaction still goes into the replication stream, where the replicas acknowledge it.
constexpr const char* kWaitMarkKey = "stockctl:wait-mark";

void append_mark(Connection& conn) {
  conn.append({"MULTI"});
  conn.append({"SET", kWaitMarkKey, "1"});
  conn.append({"DEL", kWaitMarkKey});
  conn.append({"EXEC"});
}

// The run id of the server process behind `conn` (INFO server), or "" when it cannot be read.
std::string server_run_id(Connection& conn) {
  const Reply info = conn.command({"INFO", "server"});
  if (info.type != Reply::Type::string) return {};
  auto fields = parse_info(info.str);
  return fields["run_id"];
}

// Reads the mark's four replies: whether its transaction ran.
bool read_mark(Connection& conn) {
  Reply replies[4];
  for (Reply& reply : replies) reply = conn.read();
  const Reply& exec = replies[3];
  return exec.type == Reply::Type::array && exec.elements.size() == 2 &&
         !exec.elements[0].is_error() && !exec.elements[1].is_error();
}

}  // namespace

bool StandaloneClient::can_wait_beside() {
  // A window's WAIT on its own connection holds back the next window there until the replicas
  // have caught up, and the server idles. Replication is one stream, applied in order: a
  // replica that acknowledges a write made on another connection after the window's last
  // reply holds the whole window, while the next window runs on conn_.
  // The mark proves that only where both connections reach one server process: a name or an
  // address that a failover moves (DNS, a proxy, a virtual IP) could send the second to
  // another server, whose replicas would acknowledge a mark that says nothing of this window.
  if (side_) return true;
  if (side_failed_ || conn_run_id_.empty()) return false;
  try {
    side_ = open_(options_);
    if (server_run_id(*side_) == conn_run_id_) {
      append_mark(*side_);
      side_->flush();
      if (read_mark(*side_)) return true;
    }
  } catch (const StockctlError&) {  // ConnectionError, or TlsError for a certificate refused
  }
  // Refused (an ACL without the key, a server out of memory) or gone: WAIT on conn_, as before.
  side_.reset();
  side_failed_ = true;
  return false;
}

int StandaloneClient::wait_beside() {
  if (side_) {
    try {
      append_mark(*side_);
      append_wait(*side_, wait_for_);
      side_->flush();
      const bool marked = read_mark(*side_);
      const int count = read_wait(*side_);
      // A refused mark leaves the WAIT counting the previous one: it confirms nothing new.
      if (marked) return count;
    } catch (const StockctlError&) {
    }
  }
  side_.reset();
  side_failed_ = true;
  return 0;
}

void StandaloneClient::unconfirmed_is_unknown(InFlight& window) const {
  // Behind sentinels, a write the replicas did not confirm may sit on a master that a failover
  // is replacing, and vanish with it. With a request id it is safe to send again once the
  // sentinels name the master: the ledger there says whether it holds the write.
  for (std::size_t k = 0; k < window.calls.size(); ++k) {
    CallResult& r = window.results[k];
    if (!window.calls[k].writes || !window.calls[k].idempotent ||
        r.replicas_acked >= r.replicas_wanted || r.state != CallResult::State::replied ||
        r.reply.is_error()) {
      continue;
    }
    r.state = CallResult::State::unknown;
    // describe() puts "outcome unknown: " in front when no retry settles it.
    r.error = fmt::format("{} of {} replicas acknowledged the write (a failover under way?)",
                          std::max(r.replicas_acked, 0), r.replicas_wanted);
  }
}

void StandaloneClient::judge_unconfirmed(InFlight& window) {
  if (options_.url.kind != RedisUrl::Kind::sentinel || !window.wait || !has_unconfirmed(window)) {
    return;  // no WAIT fell short, or confirm_master made its writes unknown already
  }
  // ROLE's reply must come next on the connection: the windows sent since are read first.
  drain();
  int attached = 0;
  if (conn_ && conn_->where() == window.server) {
    try {
      attached = ask_role(*conn_).attached();
    } catch (const ConnectionError& e) {
      lose_connection(e.what());
    }
  }
  // The master still has the replicas it was waited for: they lag, and no failover is
  // replacing it (the sentinels name it still). Sent again, the write would only wait for the
  // same replicas until --retry-timeout; its caller reports it as not confirmed. A master that
  // lost them (its replica promoted by a failover the sentinels have not announced yet, or
  // gone) may be replaced: the write is sent again, to the master the sentinels name then.
  if (attached < window_wanted(window)) {
    unconfirmed_is_unknown(window);
    return;
  }
  // WAIT counts up to the last write of the connection it is sent on: only the one that wrote
  // the window may be asked again (a new one that wrote nothing yet would confirm it at once).
  if (window.conn_serial == conn_serial_) wait_again(window);
}

void StandaloneClient::wait_again(InFlight& window) {
  // A replica that came online during the WAIT (a new master's first replica, once its full
  // sync ends) was never asked for its acknowledgement: WAIT asks only the replicas online when
  // it starts, and a replica acknowledges unasked once a second. A second WAIT asks it. It
  // counts every write the connection made, this window's and those read since.
  if (!conn_) return;
  try {
    append_wait(*conn_, window_wanted(window));
    conn_->flush();
    const int count = read_wait(*conn_);
    for (std::size_t k = 0; k < window.calls.size(); ++k) {
      CallResult& r = window.results[k];
      if (window.calls[k].writes) r.replicas_acked = std::max(r.replicas_acked, count);
    }
  } catch (const ConnectionError& e) {
    lose_connection(e.what());
  }
}

int StandaloneClient::window_wanted(const InFlight& window) {
  int wanted = 0;
  for (const CallResult& r : window.results) wanted = std::max(wanted, r.replicas_wanted);
  return wanted;
}

bool StandaloneClient::has_unconfirmed(const InFlight& window) {
  for (std::size_t k = 0; k < window.calls.size(); ++k) {
    const CallResult& r = window.results[k];
    if (window.calls[k].writes && window.calls[k].idempotent &&
        r.state == CallResult::State::replied && !r.reply.is_error() &&
        r.replicas_acked < r.replicas_wanted) {
      return true;
    }
  }
  return false;
}

void StandaloneClient::confirm_master(InFlight& window) {
  if (!watch_ || !conn_ || window.checked ||
      std::none_of(window.calls.begin(), window.calls.end(),
                   [](const Call& c) { return c.writes; })) {
    return;
  }
  window.checked = true;
  const std::optional<std::string> named = watch_->master();
  // No sentinel answered: nothing says the master moved (a retry after a lost connection asks
  // them again anyway).
  if (!named || *named == conn_->where()) return;
  if (!master_moved_) {
    print_warning(fmt::format(
        "the sentinels now name {} as master '{}', not {}: writes taken by the old master since "
        "are lost when it is demoted; those with a request id go again to the new master",
        *named, options_.url.master, conn_->where()));
  }
  master_moved_ = true;
  for (std::size_t k = 0; k < window.calls.size(); ++k) {
    CallResult& r = window.results[k];
    if (!window.calls[k].writes || r.state != CallResult::State::replied || r.reply.is_error()) {
      continue;
    }
    r.state = CallResult::State::unknown;
    r.error = fmt::format("written to {}, which the sentinels no longer name as the master ({} is)",
                          conn_->where(), *named);
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

bool StandaloneClient::not_sent_for_load(const std::vector<std::size_t>& where,
                                         std::vector<CallResult>& results, const std::string& why) {
  // The load got no answer (a stall past --timeout, a lost connection): none of the calls that
  // missed their script ran, and whether the server has it now is unknown. They are reported
  // as never sent, so that they are retried like any call that certainly did not run, within
  // --retry-timeout, and the next try finds the script or loads it again. Their answer is then
  // their own, or this reason; never the server's NOSCRIPT.
  for (std::size_t i : where) {
    results[i] = CallResult{};
    results[i].error = why;
  }
  return true;
}

bool StandaloneClient::reload_missing_scripts(const std::vector<Call>& calls,
                                              std::vector<CallResult>& results) {
  std::vector<Call> again;
  std::vector<std::size_t> where;
  bool noscript = false, library = false;
  std::string refused;  // why the server will not run our functions
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const ScriptMiss miss = script_miss(calls[i], results[i]);
    if (miss == ScriptMiss::none) continue;
    noscript = noscript || miss == ScriptMiss::script;
    library = library || miss == ScriptMiss::library;
    if (miss == ScriptMiss::no_functions && refused.empty()) refused = results[i].reply.str;
    again.push_back(calls[i]);
    where.push_back(i);
  }
  if (again.empty()) return false;
  // None of these calls ran (see ScriptMiss), so loading what the server lacks and sending
  // them again cannot apply anything twice. A failed load shows up as the retried call's own
  // error.
  if (library && refused.empty()) {
    const Script& script = *again.front().script;
    const CallResult loaded = send_raw({Call::read(load_library_argv(script))})[0];
    if (loaded.state != CallResult::State::replied) {
      return not_sent_for_load(
          where, results,
          fmt::format("loading the Functions library {}: {}", script.library->name, loaded.error));
    }
    if (library_loaded(loaded.reply)) {
      // An error here means the library is there already: the windows sent after the first
      // one missed it too and load it again, and another process may have loaded it meanwhile.
      if (!loaded.reply.is_error()) {
        print_info(fmt::format("loaded the Functions library {}", script.library->name));
      }
    } else {
      refused = loaded.reply.str;
    }
  }
  if (!refused.empty()) {
    script_calls_ = ScriptCalls::evalsha;
    if (conn_) conn_->set_script_calls(script_calls_);
    print_info(
        fmt::format("the server does not run our Functions ({}); scripts are called with "
                    "EVALSHA",
                    refused));
  }
  if (script_calls_ == ScriptCalls::evalsha) {
    std::vector<Call> loads;
    for (const Call& c : again) {
      const bool seen = std::any_of(loads.begin(), loads.end(),
                                    [&](const Call& l) { return l.args[2] == c.script->body; });
      if (!seen) loads.push_back(Call::once({"SCRIPT", "LOAD", std::string(c.script->body)}));
    }
    const std::vector<CallResult> loaded = send_raw(loads);
    for (const CallResult& load : loaded) {
      if (load.state != CallResult::State::replied) {
        return not_sent_for_load(where, results,
                                 fmt::format("loading the scripts: {}", load.error));
      }
    }
    const std::size_t scripts = loaded.size();
    if (noscript) {
      print_info(
          fmt::format("the server had no copy of the scripts (NOSCRIPT); loaded {}", scripts));
    }
  }
  std::vector<CallResult> retried = send_raw(again);
  for (std::size_t k = 0; k < again.size(); ++k) results[where[k]] = std::move(retried[k]);
  return true;
}

void StandaloneClient::connect() {
  // The side connection is opened again, and checked against the new one, when next needed.
  side_.reset();
  side_failed_ = false;
  conn_run_id_.clear();
  conn_ = open_(options_);
  ++conn_serial_;
  conn_->set_script_calls(script_calls_);
  master_moved_ = false;
  wait_for_ = replicas_to_wait_for_here();
  // Behind Sentinel each window's WAIT stays on this connection (see can_wait_beside).
  if (wait_for_ > 0 && options_.url.kind != RedisUrl::Kind::sentinel) {
    conn_run_id_ = server_run_id(*conn_);
  }
  if (options_.url.kind == RedisUrl::Kind::sentinel && !watch_) {
    watch_ = std::make_unique<SentinelWatch>(options_);
  }
}

int StandaloneClient::replicas_to_wait_for_here() {
  const int asked = options().wait_replicas;
  if (asked != kWaitReplicasAuto) return asked;
  // ROLE lists the replicas attached now, in one round trip on a connection that is new anyway.
  // A server that refuses it (an ACL) is written to without waiting, as before the default.
  const int attached = ask_role(*conn_).attached();
  const bool sentinel = options_.url.kind == RedisUrl::Kind::sentinel;
  // Behind Sentinel a master none of whose replicas is attached now, while the sentinels see one
  // alive, is a master a failover may be replacing (promoting a replica detaches it first): its
  // writes are waited for all the same, so that none is reported ok that only it holds. Before,
  // the default turned to 0 here, and a failover lost thousands of ok deductions. A replica that
  // is down is not waited for (the master's writes are as safe as the master).
  if (sentinel && attached == 0 && conn_->sentinel_replicas() > 0) {
    if (!warned_unreplicated_) {
      warned_unreplicated_ = true;
      print_warning(fmt::format(
          "{} has no replica attached, but the sentinels see {} alive (a failover under way?): "
          "waiting for one all the same, so that a write not copied is not reported ok "
          "(--wait-replicas 0 writes without waiting)",
          conn_->where(), conn_->sentinel_replicas()));
    }
    return replicas_to_wait_for(asked, conn_->sentinel_replicas());
  }
  if (warn_unreplicated(asked, attached, sentinel) && !warned_unreplicated_) {
    warned_unreplicated_ = true;
    print_warning(fmt::format(
        "{} has no replica attached: its writes are not copied anywhere, and a failover would "
        "lose them; writing without waiting for replicas",
        conn_->where()));
  }
  return replicas_to_wait_for(asked, attached);
}

void StandaloneClient::announce_script_calls(const std::vector<Call>& calls) {
  if (announced_ ||
      std::none_of(calls.begin(), calls.end(), [](const Call& c) { return c.script; })) {
    return;
  }
  announced_ = true;
  if (script_calls_ == ScriptCalls::functions) {
    const Call& first =
        *std::find_if(calls.begin(), calls.end(), [](const Call& c) { return c.script; });
    print_info(fmt::format("scripts are called with FCALL (Redis Functions, library {})",
                           first.script->library->name));
  } else {
    print_info("scripts are called with EVALSHA");
  }
}

}  // namespace stockctl
