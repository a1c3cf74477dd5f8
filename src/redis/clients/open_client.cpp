#include "redis/clients/open_client.h"

#include "redis/cluster/router.h"
#include "redis/standalone_client.h"

namespace stockctl {

std::unique_ptr<Client> open_client(Topology topology, const ConnectOptions& options,
                                    const ClientOptions& client_options,
                                    const ConnectionFactory& open) {
  if (topology == Topology::cluster) {
    return std::make_unique<ClusterClient>(options, client_options, open);
  }
  return std::make_unique<StandaloneClient>(options, client_options, open);
}

}  // namespace stockctl
