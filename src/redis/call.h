#pragma once

#include <string>
#include <vector>

#include "redis/client.h"

namespace stockctl {

/// The argv that sends a call: EVALSHA sha numkeys args... for scripts, else the args as given.
std::vector<std::string> script_argv(const Call& call);

class Connection;
/// Queues a call on a connection (as script_argv would send it, without building the vector).
void append_call(Connection& conn, const Call& call);

}  // namespace stockctl
