// `stockctl help [SUBCOMMAND]`: the same text as `stockctl [SUBCOMMAND] --help`, as git and
// other tools with subcommands offer it.

#include <fmt/format.h>

#include <iostream>

#include "base/errors.h"
#include "base/text.h"
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
  throw InputError(
      fmt::format("no such command {}; run 'stockctl help' for the list", quote_value(name)));
}

}  // namespace

std::string program_footer() {
  std::string formats;
  for (const char* name : kFormatNames)
    formats += (formats.empty() ? "" : ", ") + std::string(name);
  return fmt::format(
      "Source formats (--format): {} (jsonl is ndjson);\n"
      "by default from the file's extension.\n"
      "\n"
      "Password, first found: --password-file FILE, the URL, then the environment variables\n"
      "STOCKCTL_PASSWORD and REDISCLI_AUTH. The URL: --url, then STOCKCTL_URL, then REDIS_URL.\n"
      "\n"
      "Exit status: 0 ok, 1 runtime failure (connect, timeout, Redis or I/O error), 2 usage or\n"
      "invalid input, 3 insufficient stock (or a hold expired), 4 not initialized or missing,\n"
      "5 busy (a lock was held), 6 drift (rebuild --fail-on-drift), 130/143 interrupted; with\n"
      "several items the most serious wins, in the order 1, 2, 5, 4, 3, 6, 0.\n"
      "\n"
      "Examples:\n"
      "  STOCKCTL_URL=redis://cache:6379 stockctl deduct 42 2 --request-id order-1001\n"
      "  stockctl rebuild --file export.csv --dry-run\n"
      "\n"
      "'stockctl help COMMAND' explains a command; man stockctl is the full reference.",
      formats);
}

void setup_help(CLI::App& app, Program& program) {
  app.footer(program_footer());
  auto name = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("help", "show help for stockctl or one of its commands");
  sub->add_option("SUBCOMMAND", *name, "the command to explain");
  sub->callback(
      [&app, &program, name] { program.run = [&app, name] { return run_help(app, *name); }; });
}

}  // namespace stockctl
