#pragma once

#include <memory>

#include "redis/connection.h"

namespace stockctl {

/// For a redis+sentinel:// URL: asks the sentinels, in the URL's order, for the master's
/// address (with the sentinels' own credentials and the same TLS settings), connects to it
/// with the URL's credentials and database, and confirms with ROLE that it is a master; a
/// sentinel that is down, does not know the master, or names a node that is not (yet) a master
/// sends us to the next one. Throws ConnectionError naming what each sentinel said (a failover
/// in progress: retry later), or TlsError.
std::unique_ptr<Connection> connect_to_master(const ConnectOptions& options);

}  // namespace stockctl
