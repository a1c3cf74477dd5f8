#pragma once

#include <string>
#include <vector>

#include "redis/client.h"

namespace stockctl {

/// The argv that sends a call with EVALSHA sha numkeys args... for scripts, else the args as
/// given.
std::vector<std::string> script_argv(const Call& call);

class Connection;
/// Queues a call on a connection: FCALL of the script's function in its library, or EVALSHA
/// once the connection knows the server has no Functions for us (Connection::script_calls).
void append_call(Connection& conn, const Call& call);

/// Why a script call's error reply says it did not run, so that it can be sent again once the
/// server has what it needs.
enum class ScriptMiss {
  none,          ///< any other reply
  script,        ///< NOSCRIPT: EVALSHA of a script the server has no copy of
  library,       ///< FCALL of a function the server has not loaded
  no_functions,  ///< FCALL refused: a server before Redis 7, or an ACL that forbids it
};
ScriptMiss script_miss(const Call& call, const CallResult& result);

/// The command that loads a script's library, and whether its reply means the library is there
/// (loaded now, or by another process a moment ago).
std::vector<std::string> load_library_argv(const Script& script);
bool library_loaded(const Reply& reply);

}  // namespace stockctl
