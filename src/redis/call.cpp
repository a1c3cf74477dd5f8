#include "redis/call.h"

#include <algorithm>
#include <cctype>

#include "redis/connection.h"

namespace stockctl {
namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

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
  const std::string& text = result.reply.str;
  if (result.reply.error_code() == "NOSCRIPT") return ScriptMiss::script;
  if (starts_with(text, "ERR Function not found")) return ScriptMiss::library;
  // Redis before 7 does not know FCALL ("ERR unknown command 'FCALL'", older servers quote it
  // `FCALL`); an ACL may forbid it ("NOPERM ... the 'fcall' command"). Neither ran anything.
  const std::string lowered = lower(text);
  const bool names_fcall = lowered.find("fcall") != std::string::npos;
  if (names_fcall &&
      (starts_with(lowered, "err unknown command") ||
       (starts_with(text, "NOPERM") && lowered.find("'fcall' command") != std::string::npos))) {
    return ScriptMiss::no_functions;
  }
  return ScriptMiss::none;
}

std::vector<std::string> load_library_argv(const Script& script) {
  return {"FUNCTION", "LOAD", std::string(script.library->code)};
}

bool library_loaded(const Reply& reply) {
  if (!reply.is_error()) return true;
  // Another process loaded the same library between our FCALL and our FUNCTION LOAD.
  return reply.str.find("already exists") != std::string::npos;
}

}  // namespace stockctl
