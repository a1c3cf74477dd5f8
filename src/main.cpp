// stockctl: run inventory kept in Redis. main builds the command line, runs the chosen
// subcommand, and is the one place that turns errors into exit statuses.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <iostream>
#include <vector>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "cli/command_line.h"
#include "cli/common_options.h"
#include "cli/error_exit.h"
#include "commands/program.h"
#include "output/metrics.h"
#include "version.h"

namespace {

// Parses the command line into `app`: CLI11 reads the words before "--", and every word after
// it goes to the chosen subcommand's arguments, whatever it looks like. (CLI11 2.1 hands the
// words after "--" back to the parent once a subcommand has its required arguments, where
// `get 1 -- --pretty` would turn pretty printing on.)
void parse_command_line(CLI::App& app, const stockctl::SplitCommandLine& words) {
  std::vector<std::string> reversed(words.options.rbegin(), words.options.rend());
  app.parse(reversed);  // CLI11 takes the words last first
  if (words.arguments.empty()) return;
  std::vector<CLI::App*> chosen = app.get_subcommands();
  if (chosen.empty()) throw CLI::RequiredError("A subcommand");
  stockctl::add_positional_words(*chosen.front(), words.arguments);
}

int usage_error(const std::string& message) {
  stockctl::print_error(message);
  fmt::print(stderr, "Run 'stockctl --help' for usage.\n");
  return static_cast<int>(stockctl::ExitCode::invalid_input);
}

// Runs the chosen subcommand; the one place where errors become exit statuses.
stockctl::ExitCode run_guarded(stockctl::Program& program) {
  using namespace stockctl;
  try {
    ExitCode code = program.run();
    std::cout.flush();
    return code;
  } catch (const StockctlError& e) {
    std::cout.flush();
    print_error(e.what());
    return exit_code_for(e);
  } catch (const std::exception& e) {
    std::cout.flush();
    print_error(e.what());
    return ExitCode::failure;
  }
}

std::string version_text() {
  return fmt::format("stockctl {} ({})", stockctl::kVersion, stockctl::kGitRevision);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stockctl;
  CLI::App app{"stockctl: deduct, read, give back, load and rebuild inventory kept in Redis",
               "stockctl"};
  app.require_subcommand(1);
  app.fallthrough();  // subcommands created below inherit it
  app.set_version_flag("--version", version_text());
  Program program;
  add_common_options(app, program.common);
  setup_get(app, program);
  setup_deduct(app, program);
  setup_add(app, program);
  setup_init(app, program);
  setup_rebuild(app, program);
  setup_delete(app, program);
  setup_export(app, program);
  setup_log(app, program);
  setup_holds(app, program);
  setup_bench(app, program);
  setup_doctor(app, program);
  setup_help(app, program);
  setup_complete(app, program);
  name_option_values(app);
  SplitCommandLine words = split_at_double_dash(argc, argv);
  try {
    parse_command_line(app, words);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes start at 100; the contract says usage errors exit 2.
    std::string explained = explain_usage_error(app, words.options);
    return usage_error(explained.empty() ? usage_message(e.what()) : explained);
  } catch (const InputError& e) {
    return usage_error(e.what());
  }
  set_verbosity(program.common.quiet     ? Verbosity::quiet
                : program.common.verbose ? Verbosity::verbose
                                         : Verbosity::normal);
  for (const CLI::App* sub : app.get_subcommands()) program.op = sub->get_name();
  const auto started = std::chrono::steady_clock::now();
  install_interrupt_handlers();
  ExitCode code = run_guarded(program);
  if (interrupted()) code = exit_code_for_signal(interrupt_signal());
  if (!program.common.metrics_file.empty()) {
    RunMetrics metrics{
        program.op,
        program.stats,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
        static_cast<int>(code),
        std::time(nullptr),
        program.extra_metrics};
    try {
      write_metrics_file(program.common.metrics_file, metrics);
    } catch (const StockctlError& e) {
      print_error(e.what());
      code = most_serious(code, exit_code_for(e));
    }
  }
  return static_cast<int>(code);
}
