#include "scripts/registry.h"

#include "lua_scripts.h"
#include "redis/connection.h"

namespace stockctl {

const Script& stock_script() { return lua::stock; }
const Script& put_script() { return lua::put; }
const Script& unlock_script() { return lua::unlock; }
const Script& extend_script() { return lua::extend; }

std::vector<const Script*> all_scripts() {
  return {&lua::stock, &lua::put, &lua::unlock, &lua::extend};
}

void append_call(Connection& conn, const Call& call) {
  if (call.script == nullptr) return conn.append(call.args);
  const std::string numkeys = std::to_string(call.keys > 0 ? call.keys : call.script->numkeys);
  conn.append({"EVALSHA", call.script->sha1, numkeys}, call.args);
}

std::vector<std::string> script_argv(const Call& call) {
  if (call.script == nullptr) return call.args;
  std::vector<std::string> argv;
  argv.reserve(call.args.size() + 3);
  argv.emplace_back("EVALSHA");
  argv.emplace_back(call.script->sha1);
  argv.push_back(std::to_string(call.keys > 0 ? call.keys : call.script->numkeys));
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  return argv;
}

}  // namespace stockctl
