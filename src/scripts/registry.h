#pragma once

#include <string>
#include <vector>

#include "redis/client.h"

namespace stockctl {

/// The embedded scripts, by role.
const Script& stock_script();
const Script& put_script();
const Script& unlock_script();
const Script& extend_script();

/// Every embedded script.
std::vector<const Script*> all_scripts();

/// The argv that sends a call: EVALSHA sha numkeys args... for scripts, else the args as given.
std::vector<std::string> script_argv(const Call& call);

class Connection;
/// Queues a call on a connection (as script_argv would send it, without building the vector).
void append_call(Connection& conn, const Call& call);

}  // namespace stockctl
