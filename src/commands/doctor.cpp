// doctor: checks the server, or every node of a cluster, for what can lose, evict or corrupt
// stock. The decisions are pure functions in core/doctor; this file only asks the nodes.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "app/connect_options.h"
#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "base/text.h"
#include "bulk/split_runner.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/cart_keys.h"
#include "core/doctor.h"
#include "core/hold_lines.h"
#include "core/replication.h"
#include "core/sku.h"
#include "redis/errors.h"
#include "redis/pipelined_connections.h"

namespace stockctl {
namespace {

struct DoctorOptions {
  bool scan = false;
  bool strict = false;
};

constexpr const char* kScanCount = "1000";

std::string glob_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// "host:port" of every node CLUSTER NODES lists (the part before '@' of its address field).
std::vector<std::string> cluster_addresses(const std::string& nodes) {
  std::vector<std::string> out;
  std::istringstream lines(nodes);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string id, address;
    if (!(words >> id >> address)) continue;
    address = address.substr(0, address.find('@'));
    if (address.empty() || address.front() == ':') continue;  // no address known yet
    out.push_back(address);
  }
  return out;
}

ConnectOptions options_for(const ConnectOptions& seed, const std::string& address) {
  ConnectOptions options = seed;
  std::size_t colon = address.rfind(':');
  options.url.kind = RedisUrl::Kind::tcp;
  options.url.host = address.substr(0, colon);
  if (options.url.host.size() > 2 && options.url.host.front() == '[') {
    options.url.host = options.url.host.substr(1, options.url.host.size() - 2);
  }
  options.url.port = std::stoi(address.substr(colon + 1));
  return options;
}

// One node's connection. Doctor asks every node itself, replicas included, and reports one it
// cannot reach at once, where a Client would keep retrying.
class NodeConnection {
 public:
  explicit NodeConnection(const ConnectOptions& options)
      : link_(options, 1, ScriptCalls::functions) {}
  Reply command(std::vector<std::string> argv) {
    return link_.call(0, Call::read(std::move(argv)));
  }
  /// Pipelines a command: its reply comes from read(), in order.
  void append(std::vector<std::string> argv) { link_.send(0, Call::read(std::move(argv))); }
  Reply read() { return link_.next_reply(0); }
  const std::string& where() const { return link_.where(0); }

 private:
  PipelinedConnections link_;
};

// SCAN answered, but not with keys (refused by the user's ACL, say): the node is reachable,
// and the check that walks its keys could not look, which it says under its own name.
class ScanRefused : public StockctlError {
 public:
  explicit ScanRefused(const std::string& message) : StockctlError(message) {}
};

ScanRefused scan_refused(NodeConnection& conn, const Reply& r) {
  return ScanRefused(fmt::format("SCAN on {}: {}", conn.where(), describe_reply(r)));
}

Finding not_walked(const char* check, const std::string& node, const ScanRefused& e) {
  return Finding{check, node, CheckStatus::warn,
                 fmt::format("its keys could not be walked ({}): not checked", e.what()),
                 "doctor needs SCAN (+scan, in the README's ACL recipe)"};
}

// Runs a check that walks a node's keys; a refused SCAN makes it a warning that names why.
template <class Check>
Finding unless_scan_refused(const char* check, const std::string& node, Check run) {
  try {
    return run();
  } catch (const ScanRefused& e) {
    return not_walked(check, node, e);
  }
}

// Calls `each` with every key a SCAN MATCH `pattern` walks over on this node.
template <class Each>
void scan_keys(NodeConnection& conn, const std::string& pattern, Each each) {
  std::string cursor = "0";
  do {
    Reply r = conn.command({"SCAN", cursor, "MATCH", pattern, "COUNT", kScanCount});
    if (r.is_error()) throw scan_refused(conn, r);
    if (r.elements.size() != 2) {
      throw StockctlError(fmt::format("{}: SCAN failed: {}", conn.where(), describe_reply(r)));
    }
    cursor = r.elements[0].str;
    each(r.elements[1].elements);
    stop_if_interrupted();
  } while (cursor != "0");
}

// Keeps a CONFIG GET reply: its value in `config`, or why there is none in `unread` (an error
// reply: an ACL user without +config|get, a managed Redis that renamed CONFIG; or no value).
void keep_config(const char* name, const Reply& r, std::map<std::string, std::string>& config,
                 std::map<std::string, std::string>& unread) {
  if (r.type == Reply::Type::array && r.elements.size() == 2) {
    config[name] = r.elements[1].str;
  } else if (r.is_error()) {
    unread[name] = fmt::format("CONFIG GET {}: {}", name, r.str);
  } else {
    unread[name] = fmt::format("CONFIG GET {} answered no value", name);
  }
}

// CONFIG GET of each of `names`, pipelined, into `config` (or why not, into `unread`).
void read_config(NodeConnection& conn, std::initializer_list<const char*> names,
                 std::map<std::string, std::string>& config,
                 std::map<std::string, std::string>& unread) {
  for (const char* name : names) conn.append({"CONFIG", "GET", name});
  for (const char* name : names) keep_config(name, conn.read(), config, unread);
}

class Doctor {
 public:
  Doctor(Context& ctx, const DoctorOptions& options, const KeyScheme& scheme)
      : ctx_(ctx), options_(options), scheme_(scheme) {}

  void check_node(const ConnectOptions& options, std::string node) {
    std::unique_ptr<NodeConnection> conn;
    try {
      conn = std::make_unique<NodeConnection>(options);
      // Behind sentinels the findings (and their redis-cli hints) name the master they found.
      if (options.url.kind == RedisUrl::Kind::sentinel) node = conn->where();
      NodeFacts facts = gather(*conn, node);
      for (auto check : {check_eviction, check_persistence, check_replication, check_memory,
                         check_cluster, check_version}) {
        report(check(facts));
      }
      // Only a node known to be a replica is passed over: the checks below read keys, which a
      // replica's copy holds too, and where the role is unknown the replication finding says so.
      const bool primary = node_role(facts) != NodeRole::replica;
      const bool cluster = facts.cluster_info.has_value() || facts.info["cluster_enabled"] == "1";
      // A cluster's replicas are nodes of their own here; one server's replicas are not.
      if (primary && !cluster) {
        for (const std::string& replica : replica_addresses(facts)) {
          report(check_replica_persistence(node, ask_replica(options, replica)));
        }
      }
      if (primary) {
        report(unless_scan_refused("locks", node,
                                   [&] { return check_locks(node, find_locks(*conn)); }));
      }
      if (primary && cluster) {
        std::optional<std::string> unread;
        const std::size_t items = items_with_expired_holds(*conn, unread);
        const std::size_t records = unread ? 0 : cluster_records_past_due(*conn, unread);
        report(check_cluster_holds(node, items, records, unread));
      } else if (primary) {
        std::optional<std::string> unread;
        const std::size_t items = items_with_expired_holds(*conn, unread);
        report(check_holds(node, items, unread));
      }
      if (primary && options_.scan) {
        try {
          scan_values(*conn, node);
        } catch (const ScanRefused& e) {
          report(not_walked("values", node, e));
        }
      }
    } catch (const StockctlError& e) {
      if (interrupted()) throw;
      report(Finding{"connect", node, CheckStatus::fail, e.what(),
                     "check that the node runs and that this host can reach it"});
    }
  }

  void finish(bool cluster) {
    for (const Finding& f : check_clocks(clocks_)) report(f);
    check_split_items(cluster);
  }

  /// sentinel: asks each sentinel of the URL which master it names and whether its quorum can be
  /// reached. Returns `seed` without the sentinels that could not be asked, to reach the master
  /// through: one that accepts and never answers (stopped) would hold each connection through
  /// it for --timeout, and has nothing to say. With none asked, `seed` itself, so that the
  /// connect finding says why.
  ConnectOptions check_sentinels_of(const ConnectOptions& seed) {
    std::vector<SentinelView> views;
    ConnectOptions answering = seed;
    answering.url.sentinels.clear();
    for (const SentinelAddress& address : seed.url.sentinels) {
      views.push_back(ask_sentinel(seed, address));
      if (!views.back().unreachable) answering.url.sentinels.push_back(address);
    }
    if (answering.url.sentinels.empty()) answering = seed;
    // The master the client reaches through them, as every command does.
    std::optional<std::string> connected;
    try {
      connected = NodeConnection(answering).where();
    } catch (const ConnectionError&) {
      // None reached: the rule alone says which one the sentinels agree on.
    }
    for (const Finding& f : check_sentinels(seed.url.master, views, connected)) report(f);
    return answering;
  }

  const std::vector<Finding>& findings() const { return findings_; }

 private:
  // Items the holds index says are due whose holds really expired (the index may be early:
  // a deduction gives expired holds back without touching it). Looks at 1000 at most. A reply
  // that is refused or not what was asked for leaves the count unknown: why goes to `unread`.
  std::size_t items_with_expired_holds(NodeConnection& conn, std::optional<std::string>& unread) {
    const std::optional<std::string> now = server_now_ms(conn, unread);
    if (!now) return 0;
    const std::string index = holds_index_key(scheme_);
    Reply due = conn.command({"ZRANGEBYSCORE", index, "-inf", *now, "LIMIT", "0", "1000"});
    // On a cluster the index is one key, on the node that serves its slot, which counts it.
    // MOVED or ASK (a slot migrating): the key is not on this node, or not only here.
    if (due.error_kind() == ErrorReply::moved || due.error_kind() == ErrorReply::ask) return 0;
    if (due.type != Reply::Type::array) {
      unread = fmt::format("ZRANGEBYSCORE {} -inf {}: {}", index, *now, describe_reply(due));
      return 0;
    }
    std::size_t count = 0;
    for (const Reply& key : due.elements) {
      const std::string holds = companion_key(key.str, kHoldsSuffix);
      Reply n = conn.command({"ZCOUNT", holds, "-inf", *now});
      if (n.error_kind() == ErrorReply::moved || n.error_kind() == ErrorReply::ask) {
        continue;  // as above: counted where it lives
      }
      if (n.type != Reply::Type::integer) {
        unread = fmt::format("ZCOUNT {} -inf {}: {}", holds, *now, describe_reply(n));
        return count;
      }
      if (n.integer > 0) ++count;
    }
    return count;
  }

  // Cluster holds and orders in this node's due indexes (one per slot with records) whose time
  // has come by this node's clock: the records reap has not looked at yet. As above, why a
  // count is not known goes to `unread`.
  std::size_t cluster_records_past_due(NodeConnection& conn, std::optional<std::string>& unread) {
    const std::optional<std::string> now = server_now_ms(conn, unread);
    if (!now) return 0;
    std::size_t count = 0;
    try {
      count_records_past_due(conn, *now, count, unread);
    } catch (const ScanRefused& e) {
      unread = e.what();
    }
    return count;
  }

  void count_records_past_due(NodeConnection& conn, const std::string& now, std::size_t& count,
                              std::optional<std::string>& unread) {
    scan_keys(conn, due_index_pattern(scheme_), [&](const std::vector<Reply>& keys) {
      for (const Reply& k : keys) conn.append({"ZCOUNT", k.str, "-inf", now});
      for (const Reply& k : keys) {
        Reply n = conn.read();
        if (n.type == Reply::Type::integer) {
          count += static_cast<std::size_t>(n.integer);
        } else if (n.error_kind() == ErrorReply::moved || n.error_kind() == ErrorReply::ask) {
          continue;  // migrated since the scan found it: counted where it lives now
        } else if (!unread) {
          unread = fmt::format("ZCOUNT {} -inf {}: {}", k.str, now, describe_reply(n));
        }
      }
    });
  }

  static SentinelView ask_sentinel(const ConnectOptions& seed, const SentinelAddress& address) {
    SentinelView view;
    view.node = fmt::format("{}:{}", address.host, address.port);
    // The sentinels' own credentials, as connecting through them uses.
    ConnectOptions options = options_for(seed, view.node);
    options.url.user.reset();
    options.url.password.reset();
    options.url.db = 0;
    options.user = seed.sentinel_user;
    options.password = seed.sentinel_password;
    // Asked on the side, as a replica is: its few SENTINEL questions answer at once from a
    // sentinel that is up, so one that does not answer within the connect timeout is reported.
    options.timeout_ms = std::min(options.timeout_ms, options.connect_timeout_ms);
    try {
      NodeConnection conn(options);
      Reply master = conn.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", seed.url.master});
      if (master.type == Reply::Type::array && master.elements.size() == 2) {
        view.master = master.elements[0].str + ":" + master.elements[1].str;
      }
      // Its config epoch: the master named with the highest is the one stockctl connects to.
      Reply about = conn.command({"SENTINEL", "MASTER", seed.url.master});
      std::vector<std::string> fields;
      for (const Reply& field : about.elements) fields.push_back(field.str);
      view.config_epoch = sentinel_config_epoch(fields);
      Reply quorum = conn.command({"SENTINEL", "CKQUORUM", seed.url.master});
      view.quorum_ok = !quorum.is_error();
      view.quorum = quorum.str;
    } catch (const StockctlError& e) {
      if (interrupted()) throw;
      view.unreachable = e.what();
    }
    return view;
  }

  // A replica is asked on the side of its primary's checks: one that accepts and does not
  // answer (stopped, swapping, behind a firewall that drops) is reported after the connect
  // timeout the user gave, not after --timeout, which a slow command may need on a node checked
  // for itself. Its few CONFIG GETs answer at once from a replica that is up.
  static ConnectOptions replica_options(const ConnectOptions& primary, const std::string& address) {
    ConnectOptions options = options_for(primary, address);
    options.timeout_ms = std::min(options.timeout_ms, options.connect_timeout_ms);
    return options;
  }

  static ReplicaFacts ask_replica(const ConnectOptions& primary, const std::string& address) {
    ReplicaFacts replica;
    replica.node = address;
    try {
      NodeConnection conn(replica_options(primary, address));
      read_config(conn, {"appendonly", "appendfsync", "save"}, replica.config,
                  replica.config_unread);
    } catch (const StockctlError& e) {
      if (interrupted()) throw;
      replica.unreachable = e.what();
    }
    return replica;
  }

  // The node's TIME in ms, or nullopt with why in `unread` (refused, as for an ACL user without
  // +time).
  static std::optional<std::string> server_now_ms(NodeConnection& conn,
                                                  std::optional<std::string>& unread) {
    Reply time = conn.command({"TIME"});
    if (time.type != Reply::Type::array || time.elements.size() != 2) {
      unread = fmt::format("TIME: {}", describe_reply(time));
      return std::nullopt;
    }
    return std::to_string(std::stoll(time.elements[0].str) * 1000 +
                          std::stoll(time.elements[1].str) / 1000);
  }

  NodeFacts gather(NodeConnection& conn, const std::string& node) {
    NodeFacts facts;
    facts.node = node;
    const Reply info = conn.command({"INFO"});
    if (info.is_error()) {
      facts.info_unread = fmt::format("INFO: {}", info.str);
    } else {
      facts.info = parse_info(info.str);
    }
    read_config(conn,
                {"maxmemory-policy", "maxmemory", "appendonly", "appendfsync", "save",
                 "min-replicas-to-write", "min-replicas-max-lag"},
                facts.config, facts.config_unread);
    if (facts.info_unread) read_role(conn, facts);
    read_cluster_state(conn, facts);
    sample_clock(conn, node);
    return facts;
  }

  // ROLE, for a node whose INFO could not be read: whether it is a primary or a replica decides
  // which checks it gets. Its first element, or why there is none.
  static void read_role(NodeConnection& conn, NodeFacts& facts) {
    const Reply role = conn.command({"ROLE"});
    if (role.type == Reply::Type::array && !role.elements.empty()) {
      facts.role = role.elements[0].str;
    } else {
      facts.role_unread = fmt::format("ROLE: {}", describe_reply(role));
    }
  }

  // CLUSTER INFO and CLUSTER NODES of a cluster node. Without INFO (refused) CLUSTER INFO
  // itself says whether this is one. What is refused, the cluster check says it could not read.
  static void read_cluster_state(NodeConnection& conn, NodeFacts& facts) {
    if (!facts.info_unread && facts.info["cluster_enabled"] != "1") return;
    const Reply info = conn.command({"CLUSTER", "INFO"});
    if (info.error_kind() == ErrorReply::cluster_disabled) return;
    if (info.is_error()) {
      facts.cluster_unread = fmt::format(
          "{}CLUSTER INFO: {}", facts.info_unread ? *facts.info_unread + "; " : "", info.str);
      return;
    }
    facts.cluster_info = info.str;
    const Reply nodes = conn.command({"CLUSTER", "NODES"});
    if (nodes.is_error()) {
      facts.cluster_unread = fmt::format("CLUSTER NODES: {}", nodes.str);
    } else {
      facts.cluster_nodes = nodes.str;
    }
  }

  void sample_clock(NodeConnection& conn, const std::string& node) {
    using namespace std::chrono;
    const auto sent = steady_clock::now();
    const auto wall = system_clock::now();
    Reply r = conn.command({"TIME"});
    const auto rtt = duration_cast<milliseconds>(steady_clock::now() - sent);
    ClockSample s;
    s.node = node;
    if (r.type != Reply::Type::array || r.elements.size() != 2) {
      // Not left out: a node whose clock doctor could not read may be the one that is off.
      s.unread = fmt::format("TIME: {}", describe_reply(r));
      clocks_.push_back(s);
      return;
    }
    s.server_ms = std::stoll(r.elements[0].str) * 1000 + std::stoll(r.elements[1].str) / 1000;
    s.local_ms = duration_cast<milliseconds>((wall + rtt / 2).time_since_epoch()).count();
    s.rtt_ms = rtt.count();
    clocks_.push_back(s);
  }

  std::vector<LockKey> find_locks(NodeConnection& conn) {
    std::vector<LockKey> locks;
    scan_keys(conn, "*lock*", [&](const std::vector<Reply>& keys) {
      std::vector<std::string> found;
      for (const Reply& k : keys) {
        if (is_stockctl_lock(scheme_, k.str)) found.push_back(k.str);
      }
      for (const std::string& k : found) conn.append({"PTTL", k});
      for (const std::string& k : found) {
        const Reply pttl = conn.read();
        // A refused PTTL is no expiry doctor saw: the locks check says it could not look.
        locks.push_back(pttl.type == Reply::Type::integer
                            ? LockKey{k, pttl.integer, std::nullopt}
                            : LockKey{k, 0, fmt::format("PTTL: {}", describe_reply(pttl))});
      }
    });
    return locks;
  }

  // The GETs of one SCAN batch go out in the same pipeline as the next SCAN, so the server
  // always has the next batch to work on.
  void scan_values(NodeConnection& conn, const std::string& node) {
    const std::string pattern = glob_escape(scheme_.prefix) + "*";
    std::size_t items = 0;
    std::size_t corrupt = 0;
    Reply batch = conn.command({"SCAN", "0", "MATCH", pattern, "COUNT", kScanCount});
    for (;;) {
      if (batch.is_error()) throw scan_refused(conn, batch);
      if (batch.elements.size() != 2) {
        throw StockctlError(
            fmt::format("{}: SCAN failed: {}", conn.where(), describe_reply(batch)));
      }
      const std::string cursor = batch.elements[0].str;
      std::vector<std::string> stock_keys;
      for (const Reply& k : batch.elements[1].elements) {
        if (sku_of_stock_key(scheme_, k.str)) stock_keys.push_back(k.str);
      }
      for (const std::string& k : stock_keys) conn.append({"GET", k});
      if (cursor != "0") conn.append({"SCAN", cursor, "MATCH", pattern, "COUNT", kScanCount});
      for (const std::string& k : stock_keys) {
        Reply r = conn.read();
        ++items;
        bool wrong_type = r.error_kind() == ErrorReply::wrongtype;
        const std::optional<std::string> value = r.string_or_nil();
        if (value && is_split_record(*value)) split_items_.push_back({node, k, *value});
        if (auto f = check_value(node, k, r.string_or_nil(), wrong_type)) {
          if (f->status == CheckStatus::fail) ++corrupt;  // a split item is a warning only
          report(*f);
        }
      }
      if (cursor == "0") break;
      stop_if_interrupted();
      batch = conn.read();
    }
    report(Finding{"values", node, corrupt ? CheckStatus::fail : CheckStatus::ok,
                   fmt::format("{} items read, {} corrupt", items, corrupt),
                   corrupt ? "see the values findings above" : ""});
  }

  // split (--scan): each split item's buckets read (one missing or not a stock value fails, as a
  // corrupt value does), and on a cluster how they are spread over the primaries now. Findings
  // name the node that holds the item's own key, with one summary per such node, so that a
  // broken bucket is one failed check of its node, as a corrupt value is.
  void check_split_items(bool cluster) {
    if (split_items_.empty()) return;
    const std::vector<SlotRange> ranges =
        cluster ? read_slot_ranges(ctx_.redis(), true) : std::vector<SlotRange>{};
    struct Tally {
      std::size_t items = 0, spread = 0, broken = 0;
    };
    std::vector<std::pair<std::string, Tally>> per_node;  // in the order the scan met them
    for (const SplitItem& item : split_items_) {
      if (per_node.empty() || per_node.back().first != item.node)
        per_node.push_back({item.node, {}});
      Tally& tally = per_node.back().second;
      ++tally.items;
      const std::optional<SplitRecord> record = parse_split_record(item.record);
      const std::optional<std::string> sku = sku_of_stock_key(scheme_, item.key);
      if (!record || !sku || record->state != SplitState::live) continue;
      if (std::optional<std::string> problem =
              bad_bucket_problem(ctx_.redis(), item.key, record->target, *sku)) {
        ++tally.broken;
        report(Finding{"split", item.node, CheckStatus::fail, *problem,
                       "set the bucket to its units by hand (redis-cli SET), then stockctl get "
                       "SKU --details"});
        continue;
      }
      warn_about_transfers(item.node, item.key, *sku, record->target);
      // On one Redis there is nothing to spread over: every item with sound buckets counts.
      std::optional<Finding> uneven =
          cluster ? check_split_spread(item.key, *sku, *record, ranges) : std::nullopt;
      if (uneven) {
        report(*uneven);
      } else {
        ++tally.spread;
      }
    }
    for (const auto& [node, tally] : per_node) {
      const std::string detail =
          cluster ? fmt::format(
                        "{} of {} split items spread over the primaries as the slot map "
                        "is now, {} with a broken bucket",
                        tally.spread, tally.items, tally.broken)
                  : fmt::format("{} split {} buckets read, {} with a broken bucket", tally.items,
                                tally.items == 1 ? "item's" : "items'", tally.broken);
      report(Finding{"split", node, tally.broken ? CheckStatus::fail : CheckStatus::ok, detail,
                     tally.broken ? "see the split findings above" : ""});
    }
  }

  // Units recorded on their way between two buckets: a deduction or rebalance cut off between
  // a transfer's steps leaves them until the next one that finds the buckets short finishes it.
  // get and export count them; the warning says what finishes them now.
  void warn_about_transfers(const std::string& node, const std::string& key, const std::string& sku,
                            const BucketLayout& layout) {
    std::string error;
    const std::optional<std::vector<BucketTransfers>> transfers =
        read_transfers(ctx_.redis(), key, layout, error);
    std::size_t recorded = 0;
    for (const BucketTransfers& bucket : transfers.value_or(std::vector<BucketTransfers>{})) {
      recorded += bucket.recorded.size();
    }
    if (recorded == 0) return;
    report(Finding{"split", node, CheckStatus::warn,
                   fmt::format("item {}: {} between its buckets recorded and not finished (cut "
                               "off between its steps, or under way as the scan read it); its "
                               "total counts the units",
                               quote_value(sku),
                               recorded == 1 ? std::string("1 transfer of units")
                                             : fmt::format("{} transfers of units", recorded)),
                   fmt::format("stockctl rebalance {} finishes them", escape_control(sku))});
  }

  void report(const Finding& f) {
    nlohmann::ordered_json line;
    line["op"] = "doctor";
    line["check"] = f.check;
    line["node"] = f.node;
    line["status"] = check_status_name(f.status);
    line["detail"] = f.detail;
    line["hint"] =
        f.hint.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.hint);
    ctx_.out().write(line);
    findings_.push_back(f);
  }

  Context& ctx_;
  const DoctorOptions& options_;
  const KeyScheme& scheme_;
  std::vector<ClockSample> clocks_;
  /// --scan: a split item's stock key, its layout record, and the node that holds them.
  struct SplitItem {
    std::string node;
    std::string key;
    std::string record;
  };
  std::vector<SplitItem> split_items_;
  std::vector<Finding> findings_;
};

ExitCode run_doctor(Program& program, const DoctorOptions& options) {
  Context ctx(program);
  const ConnectOptions seed = connect_options(program.common);
  Doctor doctor(ctx, options, ctx.scheme());
  std::vector<std::string> nodes;
  if (program.common.cluster) {
    NodeConnection conn(seed);
    Reply r = conn.command({"CLUSTER", "NODES"});
    if (r.is_error()) {
      throw StockctlError(fmt::format("{}: CLUSTER NODES: {}", conn.where(), r.str));
    }
    nodes = cluster_addresses(r.str);
  }
  const ConnectOptions target =
      seed.url.kind == RedisUrl::Kind::sentinel ? doctor.check_sentinels_of(seed) : seed;
  if (nodes.empty()) {
    doctor.check_node(target, describe_endpoint(seed.url));
  } else {
    for (const std::string& node : nodes) doctor.check_node(options_for(seed, node), node);
  }
  doctor.finish(program.common.cluster);
  program.extra_metrics = render_doctor_metrics(doctor.findings());
  const std::string failed = doctor_failure_message(doctor.findings(), options.strict);
  if (failed.empty()) return ExitCode::ok;
  print_error(failed);
  return ExitCode::failure;
}

}  // namespace

void setup_doctor(CLI::App& app, Program& program) {
  auto o = std::make_shared<DoctorOptions>();
  CLI::App* sub =
      app.add_subcommand("doctor", "check the server(s) for what can lose, evict or corrupt stock");
  sub->add_flag("--scan", o->scan, "also read every item and report corrupt values");
  sub->add_flag("--strict", o->strict, "exit 1 on warnings too");
  add_common_footer(*sub);
  sub->callback([&program, o] { program.run = [&program, o] { return run_doctor(program, *o); }; });
}

}  // namespace stockctl
