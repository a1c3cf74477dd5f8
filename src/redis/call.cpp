#include "redis/call.h"

#include "redis/connection.h"

namespace stockctl {

void append_call(Connection& conn, const Call& call) {
  if (call.script == nullptr) return conn.append(call.args);
  const std::string numkeys = std::to_string(call.numkeys.value_or(call.script->numkeys));
  conn.append({"EVALSHA", call.script->sha1, numkeys}, call.args);
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

}  // namespace stockctl
