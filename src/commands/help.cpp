// `stockctl help [SUBCOMMAND]`: the same text as `stockctl [SUBCOMMAND] --help`, as git and
// other tools with subcommands offer it.

#include <fmt/format.h>

#include <iostream>

#include "cli/errors.h"
#include "commands/program.h"

namespace stockctl {
namespace {

ExitCode run_help(CLI::App& app, const std::string& name) {
  if (name.empty()) {
    // App::help() would describe the parsed subcommand (this one); ask the formatter directly.
    std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return ExitCode::ok;
  }
  for (CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name && !sub->get_group().empty()) {
      std::cout << sub->help(app.get_name());
      return ExitCode::ok;
    }
  }
  throw InputError(fmt::format("no such command '{}'; run 'stockctl help' for the list", name));
}

}  // namespace

void setup_help(CLI::App& app, Program& program) {
  auto name = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("help", "show help for stockctl or one of its commands");
  sub->add_option("SUBCOMMAND", *name, "the command to explain");
  sub->callback(
      [&app, &program, name] { program.run = [&app, name] { return run_help(app, *name); }; });
}

}  // namespace stockctl
