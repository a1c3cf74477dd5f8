#pragma once

#include <memory>

#include "redis/client.h"
#include "redis/connection.h"

namespace stockctl {

/// Which kind of client to open.
enum class Topology { standalone, cluster };

/// Opens the client for `topology`: a StandaloneClient (one server, or the master the sentinels
/// name) or a ClusterClient discovering the cluster from `options`' node. Every connection goes
/// through `open`. Throws ConnectionError (AuthenticationError for refused credentials).
std::unique_ptr<Client> open_client(Topology topology, const ConnectOptions& options,
                                    const ClientOptions& client_options,
                                    const ConnectionFactory& open = open_connection);

}  // namespace stockctl
