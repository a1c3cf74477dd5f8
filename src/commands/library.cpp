// `library`: the name of stockctl's Functions library and its functions, for applications that
// call the scripts themselves (docs/library.md); loads the library where it is missing.

#include <fmt/format.h>

#include "app/context.h"
#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/text.h"
#include "cli/common_options.h"
#include "commands/program.h"
#include "core/error_reply.h"
#include "redis/call.h"
#include "redis/errors.h"
#include "redis/scripts/registry.h"

namespace stockctl {
namespace {

struct LibraryOptions {
  std::string script;  ///< --script NAME: print that script's text for EVALSHA's SCRIPT LOAD
};

const Script* script_named(const std::string& name) {
  for (const Script* script : all_scripts()) {
    if (script->name == name) return script;
  }
  return nullptr;
}

nlohmann::ordered_json function_json(const Script& script) {
  nlohmann::ordered_json j;
  j["function"] = std::string(script.function);
  j["script"] = std::string(script.name);
  j["keys"] = script.numkeys;
  j["sha1"] = std::string(script.sha1);
  return j;
}

// Loads the library on `node` unless it is there. Returns false when the server runs no
// Functions (before Redis 7, or an ACL that forbids FUNCTION): applications use EVALSHA there.
// A refusal names the node by its address (a standalone server's node is ""), and an ACL's
// what the user lacks (`prefix`: the items' key prefix).
bool ensure_loaded(Client& client, const std::string& node, std::string_view prefix) {
  const Library& library = script_library();
  const std::string address = client.node_address(node);
  const Reply listed = client.call_on(
      node, Call::read({"FUNCTION", "LIST", "LIBRARYNAME", std::string(library.name)}));
  if (listed.is_error()) {
    if (refuses_command(listed.str, "function")) return false;
    throw ConnectionError(
        fmt::format("FUNCTION LIST on {}: {}", address, with_noperm_hint(listed.str, prefix)));
  }
  for (const Reply& entry : listed.elements) {
    // FUNCTION LIST LIBRARYNAME matches by pattern: only the exact name counts.
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
      if (entry.elements[i].str == "library_name" && entry.elements[i + 1].str == library.name) {
        return true;
      }
    }
  }
  const Reply loaded = client.call_on(node, Call::once(load_library_argv(*all_scripts().front())));
  if (!library_loaded(loaded)) {
    throw ConnectionError(fmt::format("loading the Functions library {} on {}: {}", library.name,
                                      address, with_noperm_hint(loaded.str, prefix)));
  }
  print_info(fmt::format("loaded the Functions library {} on {}", library.name, address));
  return true;
}

ExitCode run_library(Program& program, const LibraryOptions& o) {
  Context ctx(program);
  nlohmann::ordered_json out;
  out["op"] = "library";
  if (!o.script.empty()) {
    const Script* script = script_named(o.script);
    if (script == nullptr) {
      std::string names;
      for (const Script* s : all_scripts())
        names += (names.empty() ? "" : ", ") + std::string(s->name);
      throw InputError(fmt::format("library: no script named {}; the scripts: {}",
                                   quote_value(o.script), names));
    }
    out["script"] = std::string(script->name);
    out["keys"] = script->numkeys;
    out["sha1"] = std::string(script->sha1);
    out["body"] = std::string(script->body);
    ctx.out().write(out);
    return ExitCode::ok;
  }
  bool functions = true;
  for (const std::string& node : ctx.redis().primaries()) {
    functions = ensure_loaded(ctx.redis(), node, ctx.scheme().prefix) && functions;
  }
  if (!functions) {
    print_warning(
        "the server runs no Functions (Redis before 7, or FUNCTION is not allowed): "
        "applications call the scripts with EVALSHA (their sha1 below)");
  }
  out["name"] = std::string(script_library().name);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Script* script : all_scripts()) list.push_back(function_json(*script));
  out["functions"] = std::move(list);
  ctx.out().write(out);
  return ExitCode::ok;
}

}  // namespace

void setup_library(CLI::App& app, Program& program) {
  auto o = std::make_shared<LibraryOptions>();
  CLI::App* sub = app.add_subcommand(
      "library",
      "print the Functions library's name and functions for applications that call stockctl's "
      "scripts themselves (loading it on every primary where it is missing)");
  sub->add_option("--script", o->script,
                  "print this script's text and sha1 instead (for EVALSHA where the server runs "
                  "no Functions)")
      ->type_name("NAME");
  add_common_footer(*sub);
  sub->callback(
      [&program, o] { program.run = [&program, o] { return run_library(program, *o); }; });
}

}  // namespace stockctl
