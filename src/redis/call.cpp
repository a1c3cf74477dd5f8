#include "redis/call.h"

#include "redis/connection.h"

namespace stockctl {
namespace {}  // namespace

void append_call(Connection& conn, const Call& call) {
  if (call.script == nullptr) return conn.append(call.args);
  const std::string numkeys = std::to_string(call.numkeys.value_or(call.script->numkeys));
  if (conn.script_calls() == ScriptCalls::functions) {
    conn.append({"FCALL", call.script->function, numkeys}, call.args);
  } else {
    conn.append({"EVALSHA", call.script->sha1, numkeys}, call.args);
  }
}

std::vector<std::string> script_argv(const Call& call) {
  if (call.script == nullptr) return call.args;
  std::vector<std::string> argv;
  argv.reserve(call.args.size() + 3);
  argv.emplace_back("EVALSHA");
  argv.emplace_back(call.script->sha1);
  argv.push_back(std::to_string(call.numkeys.value_or(call.script->numkeys)));
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  return argv;
}

ScriptMiss script_miss(const Call& call, const CallResult& result) {
  if (call.script == nullptr || result.state != CallResult::State::replied ||
      !result.reply.is_error()) {
    return ScriptMiss::none;
  }
  switch (result.reply.error_kind()) {
    case ErrorReply::noscript:
      return ScriptMiss::script;
    case ErrorReply::no_function:
      return ScriptMiss::library;
    default:
      break;
  }
  // Redis before 7 does not know FCALL; an ACL may forbid it. Neither ran anything.
  return refuses_command(result.reply.str, "fcall") ? ScriptMiss::no_functions : ScriptMiss::none;
}

std::vector<std::string> load_library_argv(const Script& script) {
  return {"FUNCTION", "LOAD", std::string(script.library->code)};
}

bool library_loaded(const Reply& reply) {
  if (!reply.is_error()) return true;
  // Another process loaded the same library between our FCALL and our FUNCTION LOAD.
  return reply.error_kind() == ErrorReply::library_exists;
}

}  // namespace stockctl
