#include "core/doctor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "base/text.h"
#include "core/quantity.h"
#include "core/replication.h"
#include "core/split_layout.h"

namespace stockctl {
namespace {

std::string get(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

long long to_number(const std::string& text) {
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

Finding finding(const std::string& check, const std::string& node, CheckStatus status,
                std::string detail, std::string hint = {}) {
  return Finding{check, node, status, std::move(detail),
                 status == CheckStatus::ok ? std::string() : std::move(hint)};
}

// Why the CONFIG value `name` is not known; nullopt when it was read. A name that is in
// neither map was never asked for, which is no better than refused.
std::optional<std::string> unread(const std::map<std::string, std::string>& config,
                                  const std::map<std::string, std::string>& config_unread,
                                  const std::string& name) {
  if (config.count(name)) return std::nullopt;
  auto it = config_unread.find(name);
  if (it != config_unread.end()) return it->second;
  return fmt::format("CONFIG GET {} was not sent", name);
}

std::optional<std::string> unread(const NodeFacts& f, const std::string& name) {
  return unread(f.config, f.config_unread, name);
}

// "keys=10,expires=2,avg_ttl=0" -> the expires count.
long long expires_of(const std::string& keyspace_line) {
  auto at = keyspace_line.find("expires=");
  return at == std::string::npos ? 0 : to_number(keyspace_line.substr(at + 8));
}

long long keys_with_expiry(const NodeFacts& facts) {
  long long total = 0;
  for (const auto& [field, value] : facts.info) {
    if (starts_with(field, "db") && field.size() > 2 && std::isdigit(field[2])) {
      total += expires_of(value);
    }
  }
  return total;
}

// The `[slot->-id]` (migrating) and `[slot-<-id]` (importing) marks on this node's own line.
std::vector<std::string> open_migrations(const std::string& cluster_nodes) {
  std::istringstream lines(cluster_nodes);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (fields.size() < 3 || fields[2].find("myself") == std::string::npos) continue;
    std::vector<std::string> out;
    for (std::size_t i = 8; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      if (f.size() < 2 || f.front() != '[') continue;
      bool migrating = f.find("->-") != std::string::npos;
      std::string slot = f.substr(1, f.find('-') - 1);
      std::string peer = f.substr(f.find(migrating ? "->-" : "-<-") + 3, 8);
      out.push_back(migrating ? fmt::format("slot {} migrating to {}", slot, peer)
                              : fmt::format("slot {} importing from {}", slot, peer));
    }
    return out;
  }
  return {};
}

// The host and the port of a "host:port" node, for redis-cli -h HOST -p PORT.
std::string host_of(const std::string& node) { return node.substr(0, node.rfind(':')); }
std::string port_of(const std::string& node) { return node.substr(node.rfind(':') + 1); }

// 'text' for a shell, with embedded single quotes closed, escaped and reopened.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

}  // namespace

const char* check_status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok:
      return "ok";
    case CheckStatus::warn:
      return "warn";
    case CheckStatus::fail:
      return "fail";
  }
  return "fail";
}

namespace {

const char* const kEvictionHint =
    "CONFIG SET maxmemory-policy noeviction (and in redis.conf): a full server then refuses "
    "writes instead of dropping stock keys";

// A policy that could not be read is not one that is fine: the operator looks by hand.
Finding eviction_unread(const NodeFacts& f, const std::string& why) {
  return finding(
      "eviction", f.node, CheckStatus::warn,
      fmt::format("maxmemory-policy could not be read ({}): eviction not checked", why),
      "check by hand (redis-cli CONFIG GET maxmemory-policy, or the provider's settings where "
      "CONFIG is renamed): it must be noeviction, or volatile-* only while no key has an expiry "
      "(allkeys-* evicts stock keys; volatile-* evicts the keys with one: stockctl's request "
      "ledgers, hold records and locks, and stock keys written with --ttl); doctor reads it "
      "with CONFIG GET (ACL +config|get)");
}

Finding allkeys_eviction(const NodeFacts& f, const std::string& policy) {
  if (std::optional<std::string> why = unread(f, "maxmemory")) {
    return finding("eviction", f.node, CheckStatus::warn,
                   fmt::format("maxmemory-policy {}: stock keys are evicted under memory "
                               "pressure if a maxmemory is set, and maxmemory could not be read "
                               "({})",
                               policy, *why),
                   kEvictionHint);
  }
  const long long maxmemory = to_number(get(f.config, "maxmemory"));
  if (maxmemory <= 0) {
    return finding("eviction", f.node, CheckStatus::warn,
                   fmt::format("maxmemory-policy {}: stock keys will be evicted once a maxmemory "
                               "is set",
                               policy),
                   kEvictionHint);
  }
  const std::string evicted = get(f.info, "evicted_keys");
  return finding("eviction", f.node, CheckStatus::fail,
                 fmt::format("maxmemory-policy {} with maxmemory {}: stock keys are evicted "
                             "under memory pressure, then read as missing ({})",
                             policy, maxmemory,
                             f.info_unread ? "INFO could not be read to count the keys evicted"
                                           : fmt::format("{} keys evicted so far",
                                                         evicted.empty() ? "0" : evicted)),
                 kEvictionHint);
}

Finding volatile_eviction(const NodeFacts& f, const std::string& policy) {
  if (f.info_unread) {
    return finding("eviction", f.node, CheckStatus::warn,
                   fmt::format("maxmemory-policy {}: the keys with an expiry can be evicted "
                               "under memory pressure (stockctl's request ledgers, hold records "
                               "and locks, and stock keys written with --ttl), and INFO could "
                               "not be read to count them ({})",
                               policy, *f.info_unread),
                   kEvictionHint);
  }
  const long long expiring = keys_with_expiry(f);
  if (expiring > 0) {
    return finding("eviction", f.node, CheckStatus::warn,
                   fmt::format("maxmemory-policy {}: {} keys have an expiry and can be "
                               "evicted under memory pressure: stockctl's request ledgers, "
                               "hold records and locks (an evicted ledger lets a retry of its "
                               "request ids apply again), and any stock key written with --ttl",
                               policy, expiring),
                   kEvictionHint);
  }
  return finding("eviction", f.node, CheckStatus::ok,
                 fmt::format("maxmemory-policy {}; no key has an expiry", policy));
}

}  // namespace

Finding check_eviction(const NodeFacts& f) {
  if (std::optional<std::string> why = unread(f, "maxmemory-policy")) {
    return eviction_unread(f, *why);
  }
  const std::string policy = get(f.config, "maxmemory-policy");
  if (starts_with(policy, "allkeys-")) return allkeys_eviction(f, policy);
  if (starts_with(policy, "volatile-")) return volatile_eviction(f, policy);
  return finding("eviction", f.node, CheckStatus::ok, fmt::format("maxmemory-policy {}", policy));
}

namespace {

// Why the AOF and RDB settings are not known; nullopt when both were read.
std::optional<std::string> persistence_unread(const std::map<std::string, std::string>& config,
                                              const std::map<std::string, std::string>& why) {
  if (std::optional<std::string> aof = unread(config, why, "appendonly")) return aof;
  return unread(config, why, "save");
}

// Whether the node keeps its data over a restart (AOF or RDB snapshots); nullopt when the
// settings that would say so could not be read.
std::optional<bool> persists(const std::map<std::string, std::string>& config,
                             const std::map<std::string, std::string>& why) {
  if (get(config, "appendonly") == "yes" || !get(config, "save").empty()) return true;
  if (persistence_unread(config, why)) return std::nullopt;
  return false;
}

// "AOF (appendfsync always), RDB snapshots (save 3600 1)" of a node that persists.
std::string persistence_kinds(const std::map<std::string, std::string>& config) {
  std::vector<std::string> kinds;
  if (get(config, "appendonly") == "yes") {
    const std::string fsync = get(config, "appendfsync");
    kinds.push_back(fmt::format("AOF (appendfsync {})", fsync.empty() ? "unknown" : fsync));
  }
  const std::string save = get(config, "save");
  if (!save.empty()) kinds.push_back(fmt::format("RDB snapshots (save {})", save));
  return join(kinds, ", ");
}

const char* const kPersistenceByHand =
    "check by hand (redis-cli CONFIG GET appendonly and CONFIG GET save, or the provider's "
    "persistence settings where CONFIG is renamed): with neither AOF nor RDB snapshots a "
    "restart loses every item; doctor reads them with CONFIG GET (ACL +config|get)";

}  // namespace

Finding check_persistence(const NodeFacts& f) {
  const std::optional<bool> kept = persists(f.config, f.config_unread);
  if (!kept) {
    return finding("persistence", f.node, CheckStatus::warn,
                   fmt::format("AOF and RDB settings could not be read ({}): persistence not "
                               "checked",
                               *persistence_unread(f.config, f.config_unread)),
                   kPersistenceByHand);
  }
  if (!*kept) {
    return finding("persistence", f.node, CheckStatus::warn,
                   "neither AOF nor RDB snapshots: a restart loses every item",
                   "CONFIG SET appendonly yes (and in redis.conf), or plan a rebuild after every "
                   "restart");
  }
  return finding("persistence", f.node, CheckStatus::ok, persistence_kinds(f.config));
}

namespace {

// A replica is the primary after the next failover: one without persistence then loses every
// item at its first restart.
Finding bare_replica(const std::string& node, const std::string& primary) {
  return finding("replication", node, CheckStatus::warn,
                 fmt::format("replica of {} with neither AOF nor RDB snapshots: once a failover "
                             "makes it the primary, its first restart loses every item",
                             primary),
                 "CONFIG SET appendonly yes on the replica (and in its redis.conf): a replica "
                 "is a primary after the next failover");
}

}  // namespace

namespace {

// The fields of INFO's "slave<i>:ip=...,port=...,state=online,offset=...,lag=..." line.
std::map<std::string, std::string> replica_fields(const NodeFacts& primary, long long i) {
  std::map<std::string, std::string> fields;
  std::istringstream parts(get(primary.info, fmt::format("slave{}", i)));
  for (std::string part; std::getline(parts, part, ',');) {
    std::size_t eq = part.find('=');
    if (eq != std::string::npos) fields[part.substr(0, eq)] = part.substr(eq + 1);
  }
  return fields;
}

// The replicas min-replicas-to-write counts: Redis's own count where INFO gives it
// (min_slaves_good_slaves, refreshed every second), else those online whose last
// acknowledgement is at most `max_lag` seconds old, as Redis counts them.
long long good_replicas(const NodeFacts& f, long long max_lag) {
  const std::string counted = get(f.info, "min_slaves_good_slaves");
  if (!counted.empty()) return to_number(counted);
  long long good = 0;
  const long long replicas = to_number(get(f.info, "connected_slaves"));
  for (long long i = 0; i < replicas; ++i) {
    std::map<std::string, std::string> fields = replica_fields(f, i);
    if (fields["state"] == "online" && to_number(fields["lag"]) <= max_lag) ++good;
  }
  return good;
}

// Why min-replicas-to-write or min-replicas-max-lag is not known; nullopt when both were read.
std::optional<std::string> min_replicas_unread(const NodeFacts& f) {
  if (std::optional<std::string> why = unread(f, "min-replicas-to-write")) return why;
  return unread(f, "min-replicas-max-lag");
}

Finding replica_replication(const NodeFacts& f) {
  const std::string link = get(f.info, "master_link_status");
  const std::string primary =
      fmt::format("{}:{}", get(f.info, "master_host"), get(f.info, "master_port"));
  if (link != "up") {
    return finding("replication", f.node, CheckStatus::warn,
                   fmt::format("replica of {} with its link {}", primary, link),
                   "check the replica's log and its network path to the primary");
  }
  // Settings that could not be read are the persistence check's finding on this node.
  const std::optional<bool> kept = persists(f.config, f.config_unread);
  if (kept && !*kept) return bare_replica(f.node, primary);
  return finding("replication", f.node, CheckStatus::ok,
                 fmt::format("replica of {}, link up", primary));
}

// A primary short of the replicas min-replicas-to-write requires refuses every write with
// NOREPLICAS (Redis enforces it only while min-replicas-max-lag is set too): stockctl then
// changes nothing, so it fails, whatever else is true of its replication.
std::optional<Finding> writes_refused(const NodeFacts& f) {
  if (min_replicas_unread(f)) return std::nullopt;
  const long long required = to_number(get(f.config, "min-replicas-to-write"));
  const long long max_lag = to_number(get(f.config, "min-replicas-max-lag"));
  if (required <= 0 || max_lag <= 0) return std::nullopt;
  const long long good = good_replicas(f, max_lag);
  if (good >= required) return std::nullopt;
  return finding(
      "replication", f.node, CheckStatus::fail,
      fmt::format("{} good replicas (online, heard from within min-replicas-max-lag {} s) of "
                  "the {} that min-replicas-to-write requires ({} attached): this primary "
                  "refuses every write with NOREPLICAS",
                  good, max_lag, required, to_number(get(f.info, "connected_slaves"))),
      "attach the replicas, or mend those attached (their logs, their network path to this "
      "primary, their lag), or lower min-replicas-to-write to what is there (CONFIG SET, and "
      "in redis.conf): until then every deduction, addition, init and hold is refused");
}

Finding primary_replication(const NodeFacts& f) {
  if (std::optional<Finding> refused = writes_refused(f)) return *refused;
  const long long replicas = to_number(get(f.info, "connected_slaves"));
  if (replicas == 0) {
    const std::optional<std::string> why = min_replicas_unread(f);
    return finding("replication", f.node, CheckStatus::warn,
                   why ? fmt::format("no replica: every item lives on this one server; "
                                     "min-replicas-to-write could not be read ({}): from 1 up "
                                     "(with min-replicas-max-lag), every write is refused",
                                     *why)
                       : std::string("no replica: every item lives on this one server"),
                   "add a replica, and set min-replicas-to-write 1 so that a write no replica "
                   "receives is refused (or run stockctl with --wait-replicas)");
  }
  std::vector<std::string> down;
  for (long long i = 0; i < replicas; ++i) {
    std::string line = get(f.info, fmt::format("slave{}", i));
    if (line.find("state=online") == std::string::npos) down.push_back(line);
  }
  if (!down.empty()) {
    return finding(
        "replication", f.node, CheckStatus::warn,
        fmt::format("{} of {} replicas not online: {}", down.size(), replicas, join(down, "; ")),
        "check the replicas' logs and their network path to this primary");
  }
  const std::string min_replicas = get(f.config, "min-replicas-to-write");
  if (!unread(f, "min-replicas-to-write") && to_number(min_replicas) <= 0) {
    return finding(
        "replication", f.node, CheckStatus::warn,
        fmt::format("{} replicas online; min-replicas-to-write 0: replication is asynchronous "
                    "and this primary acknowledges writes no replica has, so a failover loses "
                    "the writes of its last moments, a window nothing bounds",
                    replicas),
        "CONFIG SET min-replicas-to-write 1 and min-replicas-max-lag 10 (and in redis.conf): "
        "the primary then refuses writes while no replica is within the lag, which bounds the "
        "window; and keep stockctl's --wait-replicas 1 (its default where a replica is "
        "attached; never 0) so that an ok is a write a replica has");
  }
  const std::string max_lag = get(f.config, "min-replicas-max-lag");
  if (!unread(f, "min-replicas-max-lag") && to_number(max_lag) <= 0) {
    return finding(
        "replication", f.node, CheckStatus::warn,
        fmt::format("{} replicas online; min-replicas-to-write {} with min-replicas-max-lag "
                    "{}, which turns it off: replication is asynchronous and this primary "
                    "acknowledges writes no replica has, so a failover loses the writes of its "
                    "last moments, a window nothing bounds",
                    replicas, min_replicas, max_lag),
        "CONFIG SET min-replicas-max-lag 10 (and in redis.conf): Redis enforces "
        "min-replicas-to-write only with a lag to measure it by");
  }
  if (std::optional<std::string> why = min_replicas_unread(f)) {
    return finding(
        "replication", f.node, CheckStatus::warn,
        fmt::format("{} replicas online; min-replicas-to-write could not be read ({}): not "
                    "checked whether a failover can lose acknowledged writes",
                    replicas, *why),
        "check by hand (redis-cli CONFIG GET min-replicas-to-write and CONFIG GET "
        "min-replicas-max-lag): with min-replicas-to-write 0 replication is asynchronous and a "
        "failover loses the primary's last writes; 1 with min-replicas-max-lag 10, and "
        "stockctl's --wait-replicas 1, bound that; doctor reads them with CONFIG GET (ACL "
        "+config|get)");
  }
  return finding("replication", f.node, CheckStatus::ok,
                 fmt::format("{} replicas online; min-replicas-to-write {}, "
                             "min-replicas-max-lag {}",
                             replicas, min_replicas, max_lag));
}

}  // namespace

NodeRole node_role(const NodeFacts& f) {
  const std::string role = f.info_unread ? f.role.value_or("") : get(f.info, "role");
  if (role == "slave") return NodeRole::replica;
  // A readable INFO without a role field is a server that predates it: a primary.
  if (role == "master" || !f.info_unread) return NodeRole::primary;
  return NodeRole::unknown;
}

namespace {

// Why the role of a node whose INFO could not be read is not known either.
std::string role_unread(const NodeFacts& f) {
  if (f.role_unread) return *f.role_unread;
  if (f.role) return fmt::format("ROLE answered '{}'", *f.role);
  return "ROLE was not sent";
}

}  // namespace

Finding check_replication(const NodeFacts& f) {
  if (f.info_unread) {
    const char* const by_hand =
        "check by hand (redis-cli INFO replication, CONFIG GET min-replicas-to-write): "
        "a primary wants a replica online and min-replicas-to-write 1 or more, or a "
        "failover loses its last writes; doctor reads it with INFO (ACL +info)";
    if (node_role(f) == NodeRole::unknown) {
      return finding("replication", f.node, CheckStatus::warn,
                     fmt::format("INFO could not be read ({}), nor its role ({}): not known "
                                 "whether it is a primary or a replica; replication not checked",
                                 *f.info_unread, role_unread(f)),
                     std::string(by_hand) + ", and its role with ROLE (ACL +role)");
    }
    return finding(
        "replication", f.node, CheckStatus::warn,
        fmt::format("INFO could not be read ({}): replication not checked", *f.info_unread),
        by_hand);
  }
  if (get(f.info, "role") == "slave") return replica_replication(f);
  return primary_replication(f);
}

namespace {

const char* const kMemoryByHand =
    "check by hand (redis-cli INFO memory and CONFIG GET maxmemory, or the provider's memory "
    "metrics): at maxmemory with noeviction every write is refused with OOM; doctor reads them "
    "with INFO and CONFIG GET (ACL +info, +config|get)";

}  // namespace

Finding check_memory(const NodeFacts& f) {
  if (std::optional<std::string> why = unread(f, "maxmemory")) {
    return finding("memory", f.node, CheckStatus::warn,
                   fmt::format("maxmemory could not be read ({}): memory not checked", *why),
                   kMemoryByHand);
  }
  const long long maxmemory = to_number(get(f.config, "maxmemory"));
  const long long used = to_number(get(f.info, "used_memory"));
  if (maxmemory <= 0) {
    // Nothing refuses a write for memory below the host's own limit: used_memory is only told.
    return finding(
        "memory", f.node, CheckStatus::ok,
        f.info_unread
            ? std::string("no maxmemory: the host's memory is the limit")
            : fmt::format("used_memory {}; no maxmemory: the host's memory is the limit", used));
  }
  if (f.info_unread) {
    return finding("memory", f.node, CheckStatus::warn,
                   fmt::format("used_memory could not be read ({}): how full maxmemory {} is "
                               "not checked",
                               *f.info_unread, maxmemory),
                   kMemoryByHand);
  }
  // What Redis compares with maxmemory before it refuses a write (or evicts).
  const long long counted = used - to_number(get(f.info, "mem_not_counted_for_evict"));
  const long long percent = counted * 100 / maxmemory;
  if (counted >= maxmemory) {
    return finding("memory", f.node, CheckStatus::fail,
                   fmt::format("used_memory {} of maxmemory {}: the server is full and refuses "
                               "writes with OOM now (with noeviction; other policies evict)",
                               used, maxmemory),
                   "raise maxmemory (CONFIG SET maxmemory, and in redis.conf) or free memory: "
                   "until then every deduction and init is refused");
  }
  if (percent > 90) {
    return finding("memory", f.node, CheckStatus::warn,
                   fmt::format("used_memory {} is {}% of maxmemory {}: little headroom", used,
                               percent, maxmemory),
                   "raise maxmemory (CONFIG SET maxmemory, and in redis.conf) before it fills: "
                   "at maxmemory with noeviction every write is refused with OOM");
  }
  return finding("memory", f.node, CheckStatus::ok,
                 fmt::format("used_memory {} is {}% of maxmemory {}", used, percent, maxmemory));
}

std::vector<std::string> replica_addresses(const NodeFacts& primary) {
  std::vector<std::string> out;
  const long long replicas = to_number(get(primary.info, "connected_slaves"));
  for (long long i = 0; i < replicas; ++i) {
    std::map<std::string, std::string> fields = replica_fields(primary, i);
    if (!fields["ip"].empty() && !fields["port"].empty()) {
      out.push_back(fields["ip"] + ":" + fields["port"]);
    }
  }
  return out;
}

Finding check_replica_persistence(const std::string& primary, const ReplicaFacts& replica) {
  if (replica.unreachable) {
    // Not ok: doctor could not look. A replica that is stopped or overloaded is still listed
    // by its primary until its link times out, and a failover may pick it.
    return finding("replication", replica.node, CheckStatus::warn,
                   fmt::format("replica of {}: not reachable from here ({}), its persistence "
                               "not checked",
                               primary, *replica.unreachable),
                   fmt::format("check that the replica runs and answers (redis-cli -h {} -p {} "
                               "PING; a stopped or overloaded one is still listed by its primary "
                               "for a while) and that this host can reach the address its "
                               "primary lists (replica-announce-ip); then its persistence by "
                               "hand: CONFIG GET appendonly and CONFIG GET save on it",
                               host_of(replica.node), port_of(replica.node)));
  }
  const std::optional<bool> kept = persists(replica.config, replica.config_unread);
  if (!kept) {
    return finding("replication", replica.node, CheckStatus::warn,
                   fmt::format("replica of {}: its AOF and RDB settings could not be read ({}): "
                               "its persistence not checked",
                               primary, *persistence_unread(replica.config, replica.config_unread)),
                   "check by hand on the replica (redis-cli CONFIG GET appendonly and CONFIG GET "
                   "save): a replica is the primary after the next failover, and with neither "
                   "AOF nor RDB snapshots its first restart then loses every item");
  }
  if (!*kept) return bare_replica(replica.node, primary);
  return finding("replication", replica.node, CheckStatus::ok,
                 fmt::format("replica of {}; {}", primary, persistence_kinds(replica.config)));
}

namespace {

// The master stockctl connects to: the one it did connect to when a sentinel names it (the
// client tries the named masters in turn, and one that is down or not a master is passed over),
// else by the client's own rule; "" when no sentinel names one.
SentinelAnswer agreed_master(const std::vector<SentinelView>& views,
                             const std::optional<std::string>& connected) {
  std::vector<SentinelAnswer> answers;
  for (const SentinelView& v : views) {
    if (!v.unreachable && !v.master.empty()) answers.push_back({v.master, v.config_epoch, v.node});
  }
  if (connected) {
    for (const SentinelAnswer& a : answers) {
      if (a.address == *connected) return a;
    }
  }
  const std::optional<std::string> best = sentinels_master(answers);
  if (!best) return {};
  return *std::find_if(answers.begin(), answers.end(),
                       [&](const SentinelAnswer& a) { return a.address == *best; });
}

Finding sentinel_finding(const std::string& name, const SentinelAnswer& agreed,
                         const SentinelView& v) {
  if (v.unreachable && v.unreachable->find("authentication failed") != std::string::npos) {
    return finding("sentinel", v.node, CheckStatus::warn,
                   fmt::format("refused our credentials: {}", *v.unreachable),
                   "give the sentinels' own password (--sentinel-password-file or "
                   "STOCKCTL_SENTINEL_PASSWORD; --sentinel-user for an ACL user)");
  }
  if (v.unreachable) {
    return finding("sentinel", v.node, CheckStatus::warn,
                   fmt::format("not reachable: {}", *v.unreachable),
                   "start the sentinel or mend the path to it: each one down is one vote fewer "
                   "for a failover, and below the quorum none happens");
  }
  if (v.master.empty()) {
    return finding("sentinel", v.node, CheckStatus::fail,
                   fmt::format("does not monitor a master named '{}'", name),
                   fmt::format("SENTINEL MONITOR {} HOST PORT QUORUM on this sentinel, or take "
                               "it out of the URL",
                               name));
  }
  if (v.master != agreed.address) {
    return finding("sentinel", v.node, CheckStatus::fail,
                   fmt::format("names {} as the master of '{}' (config epoch {}) where sentinel {} "
                               "names {} (config epoch {}), the master stockctl writes to: a "
                               "client asking this sentinel writes to a server the others do not "
                               "follow",
                               v.master, name, v.config_epoch, agreed.sentinel, agreed.address,
                               agreed.config_epoch),
                   fmt::format("if no failover is under way, SENTINEL RESET {} on this sentinel "
                               "(and check its view of the network)",
                               name));
  }
  if (!v.quorum_ok) {
    return finding("sentinel", v.node, CheckStatus::fail,
                   fmt::format("master {}; SENTINEL CKQUORUM {}: {}", v.master, name, v.quorum),
                   "start enough sentinels, reachable from one another, for the quorum and a "
                   "majority: without them the master's loss is never failed over");
  }
  return finding("sentinel", v.node, CheckStatus::ok,
                 fmt::format("master {}; {}", v.master, v.quorum));
}

}  // namespace

std::vector<Finding> check_sentinels(const std::string& master_name,
                                     const std::vector<SentinelView>& views,
                                     const std::optional<std::string>& connected) {
  const SentinelAnswer agreed = agreed_master(views, connected);
  std::vector<Finding> out;
  out.reserve(views.size());
  for (const SentinelView& v : views) out.push_back(sentinel_finding(master_name, agreed, v));
  return out;
}

Finding check_cluster(const NodeFacts& f) {
  const char* const by_hand =
      "check by hand (redis-cli CLUSTER INFO: cluster_state ok, 16384 slots assigned; redis-cli "
      "--cluster check HOST:PORT for slots left migrating or importing); doctor reads them with "
      "INFO, CLUSTER INFO and CLUSTER NODES (ACL +info, +cluster|info, +cluster|nodes)";
  if (!f.cluster_info && f.cluster_unread) {
    return finding("cluster", f.node, CheckStatus::warn,
                   fmt::format("the cluster state could not be read ({}): cluster not checked",
                               *f.cluster_unread),
                   by_hand);
  }
  if (!f.cluster_info) return finding("cluster", f.node, CheckStatus::ok, "not a cluster");
  auto info = parse_info(*f.cluster_info);
  std::vector<std::string> problems;
  if (get(info, "cluster_state") != "ok") {
    problems.push_back(fmt::format("cluster_state {}", get(info, "cluster_state")));
  }
  long long assigned = to_number(get(info, "cluster_slots_assigned"));
  if (assigned < 16384) problems.push_back(fmt::format("{} slots not covered", 16384 - assigned));
  for (const std::string& m : open_migrations(f.cluster_nodes.value_or(""))) problems.push_back(m);
  if (problems.empty() && f.cluster_unread) {
    return finding("cluster", f.node, CheckStatus::warn,
                   fmt::format("cluster_state ok, 16384 slots covered; slots left migrating or "
                               "importing not checked ({})",
                               *f.cluster_unread),
                   by_hand);
  }
  if (problems.empty()) {
    return finding("cluster", f.node, CheckStatus::ok,
                   fmt::format("cluster_state ok, 16384 slots covered, {} known nodes",
                               get(info, "cluster_known_nodes")));
  }
  return finding("cluster", f.node, CheckStatus::fail, join(problems, "; "),
                 fmt::format("run redis-cli --cluster fix {} (then redis-cli --cluster check {})",
                             f.node, f.node));
}

Finding check_version(const NodeFacts& f) {
  const std::string version = get(f.info, "redis_version");
  int major = 0;
  int minor = 0;
  char dot = 0;
  std::istringstream in(version);
  if (f.info_unread) {
    return finding("version", f.node, CheckStatus::warn,
                   fmt::format("the server's version could not be read ({})", *f.info_unread),
                   "check by hand (redis-cli INFO server: redis_version 6.2 or later); doctor "
                   "reads it with INFO (ACL +info)");
  }
  if (!(in >> major >> dot >> minor) || dot != '.') {
    return finding("version", f.node, CheckStatus::warn, "the server did not say its version",
                   "run INFO server on the node");
  }
  if (major < 6 || (major == 6 && minor < 2)) {
    return finding("version", f.node, CheckStatus::warn,
                   fmt::format("Redis {}: older than 6.2, which stockctl is not tested with "
                               "(init --force falls back to its put script)",
                               version),
                   "upgrade to Redis 6.2 or later (stockctl is tested with 7.0)");
  }
  return finding("version", f.node, CheckStatus::ok, fmt::format("Redis {}", version));
}

bool is_stockctl_lock(const KeyScheme& scheme, std::string_view key) {
  if (key == rebuild_lock_key(scheme)) return true;
  if (!ends_with(key, ":lock")) return false;
  std::string_view base = key.substr(0, key.size() - 5);
  if (sku_of_stock_key(scheme, base)) return true;
  return base.size() > 2 && base.front() == '{' && base.back() == '}' &&
         sku_of_stock_key(scheme, base.substr(1, base.size() - 2)).has_value();
}

namespace {

// "a, b, c, d, e, ...": the first five keys of a finding.
std::string first_keys(const std::vector<std::string>& keys) {
  std::vector<std::string> shown = keys;
  if (shown.size() > 5) shown.resize(5);
  return join(shown, ", ") + (keys.size() > shown.size() ? ", ..." : "");
}

// Locks whose PTTL could not be read may be ones without an expiry: not ok, and named.
Finding locks_unread(const std::string& node, const std::vector<const LockKey*>& unread) {
  std::vector<std::string> keys;
  keys.reserve(unread.size());
  for (const LockKey* lock : unread) keys.push_back(lock->key);
  return finding(
      "locks", node, CheckStatus::warn,
      fmt::format("{} locks whose expiry could not be read ({}): {}; not checked whether they "
                  "block their item (or every rebuild) forever",
                  keys.size(), *unread.front()->unread, first_keys(keys)),
      fmt::format("check by hand (redis-cli -h {} -p {} PTTL {}: -1 is a lock without an "
                  "expiry, which blocks forever); doctor reads it with PTTL (ACL +pttl)",
                  host_of(node), port_of(node), shell_quote(keys.front())));
}

}  // namespace

Finding check_locks(const std::string& node, const std::vector<LockKey>& locks) {
  std::vector<std::string> forever;
  std::vector<const LockKey*> unread;
  for (const LockKey& lock : locks) {
    if (lock.unread) {
      unread.push_back(&lock);
    } else if (lock.pttl_ms == -1) {
      forever.push_back(lock.key);
    }
  }
  if (forever.empty() && !unread.empty()) return locks_unread(node, unread);
  if (forever.empty()) {
    return finding("locks", node, CheckStatus::ok,
                   fmt::format("{} locks held, each with an expiry", locks.size()));
  }
  return finding(
      "locks", node, CheckStatus::fail,
      fmt::format("{} locks without an expiry, each blocking its item (or every rebuild) "
                  "forever: {}{}",
                  forever.size(), first_keys(forever),
                  unread.empty() ? std::string()
                                 : fmt::format("; the expiry of {} more could not be read ({})",
                                               unread.size(), *unread.front()->unread)),
      fmt::format("make sure no stockctl is running, then redis-cli -h {} -p {} DEL {}",
                  host_of(node), port_of(node), shell_quote(forever.front())));
}

namespace {

// Expired holds doctor could not look for may be there: not ok. reap gives them back whether or
// not anyone looked.
Finding holds_unread(const std::string& node, const std::string& why, bool cluster) {
  return finding(
      "holds", node, CheckStatus::warn,
      fmt::format("{} could not be looked for ({}): holds not checked",
                  cluster ? "expired holds and past-due cluster holds and orders" : "expired holds",
                  why),
      fmt::format("make sure stockctl reap{} runs from cron every minute (its counts say what "
                  "it gave back); doctor looks with TIME, ZRANGEBYSCORE and ZCOUNT{} (ACL +time, "
                  "+zrangebyscore, +zcount{})",
                  cluster ? " --cluster" : "", cluster ? " and SCAN" : "",
                  cluster ? ", +scan" : ""));
}

}  // namespace

Finding check_holds(const std::string& node, std::size_t items_with_expired_holds,
                    const std::optional<std::string>& unread) {
  if (unread) return holds_unread(node, *unread, false);
  if (items_with_expired_holds == 0) {
    return finding("holds", node, CheckStatus::ok, "no expired holds wait to be given back");
  }
  return finding("holds", node, CheckStatus::warn,
                 fmt::format("{} {} expired holds whose units were not given back yet",
                             items_with_expired_holds,
                             items_with_expired_holds == 1 ? "item has" : "items have"),
                 "run stockctl reap (a cron line or systemd timer every minute)");
}

Finding check_cluster_holds(const std::string& node, std::size_t items_with_expired_holds,
                            std::size_t records_past_due,
                            const std::optional<std::string>& unread) {
  if (unread) return holds_unread(node, *unread, true);
  if (records_past_due == 0) return check_holds(node, items_with_expired_holds);
  std::string detail = fmt::format(
      "{} cluster holds or orders are past due and not reaped yet (expired, cut off before "
      "their decision, or decided and not finished): their units stay held until reap",
      records_past_due);
  if (items_with_expired_holds > 0) {
    detail += fmt::format("; {} {} expired holds whose units were not given back yet",
                          items_with_expired_holds,
                          items_with_expired_holds == 1 ? "item has" : "items have");
  }
  return finding("holds", node, CheckStatus::warn, detail,
                 "run stockctl reap --cluster from cron every minute (on a cluster only reap "
                 "gives expired holds back)");
}

namespace {

// A node whose clock could not be read may be the one that is off: not ok. Alone, there is
// nothing to compare it with, and its holds expire by a clock doctor could not read.
Finding clock_unread(const ClockSample& s, bool alone) {
  return finding("clock", s.node, CheckStatus::warn,
                 fmt::format("its clock could not be read ({}){}", *s.unread,
                             alone ? "" : ": not compared with the other nodes'"),
                 fmt::format("check by hand (redis-cli -h {} -p {} TIME on each node, or its NTP "
                             "or chrony status): holds expire by server time; doctor reads it "
                             "with TIME (ACL +time)",
                             host_of(s.node), port_of(s.node)));
}

}  // namespace

std::vector<Finding> check_clocks(const std::vector<ClockSample>& samples) {
  std::vector<Finding> out;
  std::vector<const ClockSample*> read;
  for (const ClockSample& s : samples) {
    if (!s.unread) read.push_back(&s);
  }
  if (read.size() < 2) {
    const char* const detail = read.size() == samples.size()
                                   ? "one node: nothing to compare"
                                   : "no other node's clock could be read: nothing to compare";
    for (const ClockSample& s : samples) {
      out.push_back(s.unread ? clock_unread(s, samples.size() == 1)
                             : finding("clock", s.node, CheckStatus::ok, detail));
    }
    return out;
  }
  // Each node against the (lower) median offset from the local clock: one node off is named,
  // and of two nodes apart the later one is.
  std::vector<std::int64_t> offsets;
  std::int64_t slack = 0;
  for (const ClockSample* s : read) {
    offsets.push_back(s->server_ms - s->local_ms);
    slack = std::max(slack, s->rtt_ms);
  }
  std::sort(offsets.begin(), offsets.end());
  const std::int64_t median = offsets[(offsets.size() - 1) / 2];
  for (const ClockSample& sample : samples) {
    if (sample.unread) {
      out.push_back(clock_unread(sample, false));
      continue;
    }
    const std::int64_t off = sample.server_ms - sample.local_ms - median;
    const std::int64_t apart = off < 0 ? -off : off;
    if (apart > 1000 + slack) {
      out.push_back(finding(
          "clock", sample.node, CheckStatus::warn,
          fmt::format("clock {} ms {} the other nodes'", apart, off > 0 ? "ahead of" : "behind"),
          "synchronise the nodes' clocks (NTP, chrony): holds expire by "
          "server time"));
    } else {
      out.push_back(finding("clock", sample.node, CheckStatus::ok,
                            fmt::format("within {} ms of the other nodes'", apart)));
    }
  }
  return out;
}

std::optional<std::string> sku_of_stock_key(const KeyScheme& scheme, std::string_view key) {
  if (!starts_with(key, scheme.prefix)) return std::nullopt;
  std::string_view rest = key.substr(scheme.prefix.size());
  if (scheme.hashtag) {
    if (rest.size() < 3 || rest.front() != '{' || rest.back() != '}') return std::nullopt;
    rest = rest.substr(1, rest.size() - 2);
  }
  std::string sku(rest);
  if (!stored_sku_problem(sku, scheme).empty()) return std::nullopt;
  return sku;
}

std::optional<Finding> check_value(const std::string& node, const std::string& key,
                                   const std::optional<std::string>& value, bool wrong_type) {
  const char* hint = "look at the item's history, then set it: stockctl init SKU VALUE --force";
  if (wrong_type) {
    // init --force reads the key first and stops at WRONGTYPE: what is there was not written
    // by stockctl, so it is the operator's to look at and remove.
    return finding("values", node, CheckStatus::fail, fmt::format("{} is not a string key", key),
                   fmt::format("look at what it holds (redis-cli TYPE {}), remove it (redis-cli "
                               "DEL {}), then set the item: stockctl init SKU VALUE",
                               key, key));
  }
  if (!value || parse_stored_value(*value)) return std::nullopt;
  if (is_split_record(*value)) {
    // Not corrupt: a split item's stock is in its buckets, which the split check reads. One
    // being split or merged is a warning (a split cut off stays so until it is run again).
    const std::optional<SplitRecord> record = parse_split_record(*value);
    if (record && record->state == SplitState::live) return std::nullopt;
    return finding("values", node, CheckStatus::warn,
                   fmt::format("{} is being split or merged ({})", key, quote_value(*value)),
                   "run the same stockctl split command again to finish it");
  }
  std::string shown = value->size() > 40 ? value->substr(0, 40) + "..." : *value;
  return finding("values", node, CheckStatus::fail,
                 fmt::format("{} holds '{}', not a stock value", key, shown), hint);
}

std::optional<Finding> check_split_spread(const std::string& key, const std::string& sku,
                                          const SplitRecord& record,
                                          const std::vector<SlotRange>& ranges) {
  std::map<std::string, int> per_primary;
  for (const SlotRange& range : ranges) per_primary.emplace(range.node, 0);
  if (per_primary.empty() || record.state != SplitState::live) return std::nullopt;
  for (int slot : record.target.slots) {
    const std::string node = node_of_slot(ranges, slot);
    if (!node.empty()) ++per_primary[node];
  }
  const int buckets = record.target.buckets();
  const int primaries = static_cast<int>(per_primary.size());
  const int share = (buckets + primaries - 1) / primaries;  // buckets / P, or one more
  const auto busiest =
      std::max_element(per_primary.begin(), per_primary.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (busiest->second <= share) return std::nullopt;
  return finding(
      "split", busiest->first, CheckStatus::warn,
      fmt::format("{} of the {} buckets of {} are on this primary, more than its share ({} of "
                  "{} primaries): a resharding has moved them since the split, and its "
                  "deductions are not spread as they were",
                  busiest->second, buckets, key, share, primaries),
      fmt::format("stockctl split {} --buckets {} re-spreads them over the primaries as the slot "
                  "map is now (sales go on)",
                  sku, buckets));
}

int doctor_exit_status(const std::vector<Finding>& findings, bool strict) {
  for (const Finding& f : findings) {
    if (f.status == CheckStatus::fail || (strict && f.status == CheckStatus::warn)) return 1;
  }
  return 0;
}

std::string doctor_failure_message(const std::vector<Finding>& findings, bool strict) {
  // At most this many failures are named; the rest are counted (the JSON lines list them all).
  constexpr std::size_t kNamed = 5;
  // One entry per check and node, its last finding: a check that failed for several values of
  // a node (and then summed them up) is one check that failed, told by its summary.
  std::vector<const Finding*> failed;
  for (const Finding& f : findings) {
    if (f.status != CheckStatus::fail && !(strict && f.status == CheckStatus::warn)) continue;
    auto same = std::find_if(failed.begin(), failed.end(), [&f](const Finding* seen) {
      return seen->check == f.check && seen->node == f.node;
    });
    if (same == failed.end()) {
      failed.push_back(&f);
    } else {
      *same = &f;
    }
  }
  if (failed.empty()) return "";
  const char* verb = strict ? "failed or warned (--strict)" : "failed";
  if (failed.size() == 1) {
    const Finding& f = *failed.front();
    return fmt::format("doctor: check {} {} on {}: {}", f.check, verb, f.node, f.detail);
  }
  std::string named;
  for (std::size_t i = 0; i < failed.size() && i < kNamed; ++i) {
    named += fmt::format("{}{} on {}", i == 0 ? "" : ", ", failed[i]->check, failed[i]->node);
  }
  if (failed.size() > kNamed) named += fmt::format(" and {} more", failed.size() - kNamed);
  return fmt::format("doctor: {} checks {}: {}", failed.size(), verb, named);
}

std::string render_doctor_metrics(const std::vector<Finding>& findings) {
  // The worst status of each check on each node, in the order first seen.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, CheckStatus> worst;
  for (const Finding& f : findings) {
    auto key = std::make_pair(f.check, f.node);
    auto [it, fresh] = worst.emplace(key, f.status);
    if (fresh) {
      order.push_back(key);
    } else {
      it->second = std::max(it->second, f.status);
    }
  }
  std::string out =
      "# HELP stockctl_doctor_check 1 for the status each doctor check had on each node\n"
      "# TYPE stockctl_doctor_check gauge\n";
  for (const auto& key : order) {
    for (CheckStatus s : {CheckStatus::ok, CheckStatus::warn, CheckStatus::fail}) {
      out += fmt::format("stockctl_doctor_check{{check=\"{}\",node=\"{}\",status=\"{}\"}} {}\n",
                         key.first, key.second, check_status_name(s), worst[key] == s ? 1 : 0);
    }
  }
  return out;
}

}  // namespace stockctl
