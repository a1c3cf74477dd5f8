#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/info_text.h"  // parse_info, which the checks' callers use too
#include "core/sku.h"
#include "core/split_layout.h"

namespace stockctl {

/// How a doctor check came out on one node.
enum class CheckStatus { ok, warn, fail };

/// "ok", "warn" or "fail".
const char* check_status_name(CheckStatus status);

/// One line of doctor's report.
struct Finding {
  std::string check;  ///< eviction, persistence, replication, memory, sentinel, cluster,
                      ///< version, locks, holds, clock, values, connect
  std::string node;   ///< "host:port"
  CheckStatus status = CheckStatus::ok;
  std::string detail;
  std::string hint;  ///< what to do; "" when nothing
};

/// What doctor learned from one node: its INFO, the CONFIG values it asked for, and (on a
/// cluster) its own CLUSTER INFO and CLUSTER NODES. What it could not read is kept with why
/// (an ACL user without +info or +config|get, a managed Redis that renamed CONFIG): a check
/// that could not look warns and says so, never ok.
struct NodeFacts {
  std::string node;
  std::map<std::string, std::string> info;
  std::optional<std::string> info_unread;     ///< why INFO could not be read
  std::map<std::string, std::string> config;  ///< maxmemory-policy, maxmemory, appendonly, save,
                                              ///< min-replicas-to-write, min-replicas-max-lag
  /// Why a CONFIG value could not be read, by name ("CONFIG GET save: NOPERM ..."). A name in
  /// neither map was not read either.
  std::map<std::string, std::string> config_unread;
  std::optional<std::string> cluster_info;  ///< absent when not a cluster
  std::optional<std::string> cluster_nodes;
  /// Why it could not be told whether the node is in a cluster (INFO and CLUSTER INFO refused).
  std::optional<std::string> cluster_unread;
  /// Where INFO could not be read: the first element of its ROLE reply ("master", "slave"), or
  /// why ROLE could not be read either.
  std::optional<std::string> role;
  std::optional<std::string> role_unread;
};

/// A node's role, as INFO says (its role field) or, where INFO could not be read, ROLE.
enum class NodeRole { primary, replica, unknown };
/// unknown when neither INFO nor ROLE could be read: doctor does not guess.
NodeRole node_role(const NodeFacts& facts);

/// eviction: allkeys-* with a maxmemory fails (stock keys can be evicted), volatile-* warns
/// while keys have expiries, noeviction is ok. A policy that could not be read warns.
Finding check_eviction(const NodeFacts& facts);
/// persistence: neither AOF nor RDB snapshots warns (a restart loses every item), and so do
/// settings that could not be read.
Finding check_persistence(const NodeFacts& facts);
/// replication: a primary with fewer good replicas (online, within min-replicas-max-lag) than
/// min-replicas-to-write requires fails: it refuses every write with NOREPLICAS. A primary
/// without replicas, or a replica whose link is down, warns; so does a primary with replicas
/// and min-replicas-to-write 0 (or min-replicas-max-lag 0, which turns it off: it acknowledges
/// writes no replica has, so a failover loses a window of them that nothing bounds), and a
/// replica whose CONFIG was read that has neither AOF nor RDB. An INFO or min-replicas-to-write
/// that could not be read warns, and says so when the role could not be read either.
Finding check_replication(const NodeFacts& facts);
/// memory: used_memory (less what Redis does not count for eviction) at or past maxmemory fails
/// (writes are refused with OOM now, or keys evicted), above 90% of it warns; no maxmemory is
/// ok and says so. A maxmemory (or, with one, an INFO) that could not be read warns.
Finding check_memory(const NodeFacts& facts);

/// "host:port" of each replica a primary's INFO replication lists (slaveN: ip=...,port=...).
std::vector<std::string> replica_addresses(const NodeFacts& primary);
/// What doctor learned from one replica of a primary it checked: its persistence settings, or
/// why it could not be asked.
struct ReplicaFacts {
  std::string node;                                  ///< "host:port" as the primary names it
  std::optional<std::string> unreachable;            ///< why it could not be asked
  std::map<std::string, std::string> config;         ///< appendonly, appendfsync, save
  std::map<std::string, std::string> config_unread;  ///< as NodeFacts' (by name: why)
};
/// replication, on a primary's replica: neither AOF nor RDB warns (a failover makes it the
/// primary, and its first restart then loses every item); so do settings that could not be
/// read, and so does one that cannot be reached from here (stopped, overloaded, or at an
/// address this host cannot reach): its persistence was not checked.
Finding check_replica_persistence(const std::string& primary, const ReplicaFacts& replica);

/// What one sentinel of a redis+sentinel:// URL answered.
struct SentinelView {
  std::string node;                        ///< "host:port" of the sentinel
  std::optional<std::string> unreachable;  ///< why it could not be asked
  std::string master;                      ///< "host:port" it names; "" when it knows none
  std::string quorum;                      ///< its SENTINEL CKQUORUM reply (or error)
  bool quorum_ok = false;                  ///< CKQUORUM answered OK
  long long config_epoch = 0;              ///< the config-epoch of its SENTINEL MASTER
};
/// sentinel: one finding per sentinel. Unreachable warns (one fewer vote for a failover); not
/// knowing the master, naming another master than the one stockctl connects to, or CKQUORUM
/// failing (no failover can be authorized) fails. The master stockctl connects to is chosen by
/// the client's own rule (sentinels_master in core/replication.h): the one named with the
/// highest config epoch, which only a failover a majority authorized can raise, not by a count
/// of votes, in which sentinels that have not heard of a failover yet would outvote it.
/// `connected`: the master stockctl reached through the sentinels ("host:port", ROLE master),
/// which is the agreed one when a sentinel names it (two sentinels of one config epoch may name
/// different masters, one of them down).
std::vector<Finding> check_sentinels(const std::string& master_name,
                                     const std::vector<SentinelView>& views,
                                     const std::optional<std::string>& connected = std::nullopt);
/// cluster: a state other than ok, uncovered slots, or slots this node has left migrating or
/// importing fail, with the redis-cli --cluster fix hint. Not a cluster: ok. Not known whether
/// it is one (cluster_unread): warns.
Finding check_cluster(const NodeFacts& facts);
/// version: below 6.2 warns, and so does a version that could not be read.
Finding check_version(const NodeFacts& facts);

/// A lock key doctor found, with its PTTL (-1: no expiry), or why its PTTL could not be read.
struct LockKey {
  std::string key;
  long long pttl_ms = 0;
  std::optional<std::string> unread;  ///< "PTTL: NOPERM ...": whether it expires is not known
};
/// True when `key` is an init lock of an item under `scheme`, or its rebuild run lock.
bool is_stockctl_lock(const KeyScheme& scheme, std::string_view key);
/// locks: any lock without an expiry fails (it would block its item, or every rebuild, forever);
/// one whose PTTL could not be read warns, naming it.
Finding check_locks(const std::string& node, const std::vector<LockKey>& locks);

/// holds: items whose expired holds were not given back yet warn ("run reap"). `unread`: why
/// they could not be looked for (TIME, ZRANGEBYSCORE or ZCOUNT refused or failed), which warns.
Finding check_holds(const std::string& node, std::size_t items_with_expired_holds,
                    const std::optional<std::string>& unread = std::nullopt);

/// holds on a cluster primary: also the cluster holds and orders whose records are past due in
/// the node's due indexes (an expired hold, an attempt past its deadline, a decision not yet
/// carried to every group): only reap gives those back, so any warns ("run reap from cron").
/// `unread` as for check_holds.
Finding check_cluster_holds(const std::string& node, std::size_t items_with_expired_holds,
                            std::size_t records_past_due,
                            const std::optional<std::string>& unread = std::nullopt);

/// One node's TIME reply set against the local clock: `server_ms` is the node's time,
/// `local_ms` the local time halfway through the round trip, `rtt_ms` the round trip; or why
/// its TIME could not be read.
struct ClockSample {
  std::string node;
  std::int64_t server_ms = 0;
  std::int64_t local_ms = 0;
  std::int64_t rtt_ms = 0;
  std::optional<std::string> unread;  ///< "TIME: NOPERM ...": the node's clock is not known
};
/// clock: node clocks more than 1 s apart (beyond what the round trips can explain) warn, since
/// holds expire by server time. One finding per node; fewer than two nodes are ok. A node
/// whose clock could not be read warns, and the others are compared without it.
std::vector<Finding> check_clocks(const std::vector<ClockSample>& samples);

/// The item id of a stock key under `scheme`; nullopt for companion and foreign keys.
std::optional<std::string> sku_of_stock_key(const KeyScheme& scheme, std::string_view key);
/// values (doctor --scan): a stored value that is not -1 or 0..2^53-1 (or not a string at all:
/// `wrong_type`) fails; nullopt when the value is fine.
/// split (doctor --scan on a cluster): whether the live layout `record` of the item at `key`
/// still spreads its buckets over the primaries of `ranges` as a split deals them (each gets
/// buckets / P or one more). A resharding since may have moved several onto one primary: a
/// warning naming it, with the command that re-spreads them. Nothing when spread, or when
/// `ranges` names no primary (one Redis).
std::optional<Finding> check_split_spread(const std::string& key, const std::string& sku,
                                          const SplitRecord& record,
                                          const std::vector<SlotRange>& ranges);

std::optional<Finding> check_value(const std::string& node, const std::string& key,
                                   const std::optional<std::string>& value, bool wrong_type);

/// Exit status of a doctor run: 1 when a check failed (or warned, with `strict`), else 0.
int doctor_exit_status(const std::vector<Finding>& findings, bool strict);

/// The one "stockctl: error:" line of a doctor run that exits 1, naming what failed: the check,
/// its node and (for a single failure) its detail; "" when the run exits 0. Cron alerting reads
/// standard error, where every other command's exit 1 says why.
std::string doctor_failure_message(const std::vector<Finding>& findings, bool strict);

/// The findings as gauges for the node_exporter textfile collector:
/// stockctl_doctor_check{check,node,status} is 1 for the worst status each check had on each
/// node, 0 for the other two.
std::string render_doctor_metrics(const std::vector<Finding>& findings);

}  // namespace stockctl
