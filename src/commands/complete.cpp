// A hidden entry point for shell completion: the completion scripts ask the binary what exists
// instead of repeating its subcommands and flags, so the CLI11 tree stays the one truth.

#include <fmt/format.h>

#include "commands/program.h"

namespace stockctl {
namespace {

struct CompleteOptions {
  std::string subcommand;
};

void print_options(const CLI::App& app, bool inherited = false) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    // A subcommand has its own --help, and --version belongs to the program alone.
    if (inherited && (opt->get_name() == "--help" || opt->get_name() == "--version")) continue;
    for (const std::string& name : opt->get_lnames()) {
      if (opt->get_expected_max() == 0) {
        fmt::print("--{}\n", name);
      } else {
        fmt::print("--{}={}\n", name, opt->get_type_name());
      }
    }
  }
}

ExitCode run_complete(const CLI::App& app, const CompleteOptions& o) {
  if (o.subcommand.empty()) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (!sub->get_group().empty()) fmt::print("{}\n", sub->get_name());
    }
    print_options(app);
    return ExitCode::ok;
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == o.subcommand && !sub->get_group().empty()) {
      print_options(*sub);
      print_options(app, true);  // the common options fall through to the top level
    }
  }
  return ExitCode::ok;
}

}  // namespace

void setup_complete(CLI::App& app, Program& program) {
  auto o = std::make_shared<CompleteOptions>();
  CLI::App* sub = app.add_subcommand("__complete", "list subcommands, or a subcommand's options");
  sub->group("");  // hidden from --help
  sub->add_option("SUBCOMMAND", o->subcommand);
  sub->callback([&app, &program, o] { program.run = [&app, o] { return run_complete(app, *o); }; });
}

}  // namespace stockctl
