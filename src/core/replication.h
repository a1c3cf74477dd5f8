#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stockctl {

/// --wait-replicas when it is not given: wait for the replicas a primary has attached.
constexpr int kWaitReplicasAuto = -1;

/// How many replicas to WAIT for after writing to a primary that has `attached` replicas
/// online: `asked` when --wait-replicas was given (0 opts out), else 1 when it has any replica
/// (a failover would otherwise lose the acknowledged writes of its last moments), else 0 (WAIT
/// would only time out).
int replicas_to_wait_for(int asked, int attached);

/// Whether writing to a primary with `attached` replicas deserves a warning: it was expected to
/// have one (behind Sentinel, or a cluster shard whose peers have replicas) and none is left,
/// while --wait-replicas was not given.
bool warn_unreplicated(int asked, int attached, bool replicas_expected);

/// One sentinel's answer about the master it monitors.
struct SentinelAnswer {
  std::string address;         ///< "host:port" of SENTINEL GET-MASTER-ADDR-BY-NAME
  long long config_epoch = 0;  ///< the config-epoch of SENTINEL MASTER
  std::string sentinel;        ///< "host:port" of the sentinel that answered
};

/// The config-epoch of SENTINEL MASTER's reply, given as its flat list of field names and
/// values; 0 when it has none.
long long sentinel_config_epoch(const std::vector<std::string>& fields);

/// The replicas a sentinel sees alive for the master, from SENTINEL REPLICAS: one flat list of
/// field names and values per replica, counted when its flags hold none of s_down, o_down and
/// disconnected (a replica a failover is promoting is alive, and attached to no one).
int sentinel_live_replicas(const std::vector<std::vector<std::string>>& replicas);

/// The master the sentinels name: the answer with the highest configuration epoch (a failover
/// raises it, and a sentinel that has not heard of the failover yet still has the old one), the
/// first such in the URL's order; nullopt when no sentinel answered. The one rule for the
/// client, its watch between windows, and doctor's `sentinel` check.
std::optional<std::string> sentinels_master(const std::vector<SentinelAnswer>& answers);

/// The addresses worth connecting to as the master, best first: each one named with the
/// highest configuration epoch, once, in the URL's order. An address named only with a lower
/// epoch is a master a failover replaced, which may still say it is one until it is demoted:
/// while the new one is being promoted, trying it would only take writes that are lost.
std::vector<std::string> sentinels_masters_to_try(const std::vector<SentinelAnswer>& answers);

}  // namespace stockctl
