#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "redis/client.h"
#include "redis/connection.h"

namespace stockctl {

/// A Client over a Redis Cluster: discovers the slot map from any node (CLUSTER SLOTS), routes
/// every call by its first key's slot, pipelines per node (all nodes work at once), follows MOVED
/// and ASK within a bound, and loads scripts on each node that lacks them.
class ClusterClient : public Client {
 public:
  /// Discovers the cluster through the node `seed` names. Throws ConnectionError.
  ClusterClient(ConnectOptions seed, ClientOptions client_options);

  std::vector<std::string> primaries() override;
  /// Sends to that node directly; a broken connection is retried within --retry-timeout (the
  /// calls sent this way are reads) and then reported by throwing ConnectionError.
  Reply call_on(const std::string& address, const Call& call) override;

 protected:
  std::vector<CallResult> send(const std::vector<Call>& calls) override;
  /// Rediscovers the slot map (after a failover or a broken connection).
  void recover() noexcept override;

 private:
  struct Attempt;
  void refresh();
  Connection& node(const std::string& address);
  std::string route(const Call& call) const;
  void send_to_nodes(const std::vector<Call>& calls, Attempt& attempt,
                     std::vector<CallResult>& results);
  bool follow(const Call& call, const CallResult& result, const std::string& sent_to,
              bool was_asking, Attempt& next, std::size_t index);

  ConnectOptions seed_;
  std::vector<std::string> slots_;  ///< the primary serving each slot, as "host:port"
  std::map<std::string, std::unique_ptr<Connection>> nodes_;
};

}  // namespace stockctl
