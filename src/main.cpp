// stockctl: run inventory kept in Redis. main builds the command line, runs the chosen
// subcommand, and is the one place that turns errors into exit statuses.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "base/errors.h"
#include "base/interrupt.h"
#include "cli/command_line.h"
#include "cli/common_options.h"
#include "cli/error_exit.h"
#include "commands/program.h"
#include "output/atomic_file.h"
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

int usage_error(const CLI::App& app, const stockctl::SplitCommandLine& words,
                const std::string& message) {
  stockctl::print_error(message);
  const std::string hint = stockctl::usage_hint(app, words.options, message);
  if (!hint.empty()) fmt::print(stderr, "{}\n", hint);
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

// The files the command line names: sources, and the outputs that would be written.
std::vector<stockctl::NamedFile> named_files(const CLI::App& app,
                                             const stockctl::CommonOptions& common) {
  std::vector<stockctl::NamedFile> files;
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const auto& [name, output] : {std::pair{"--file", false}, std::pair{"--init-from", false},
                                       std::pair{"--report", true}, std::pair{"--output", true}}) {
      const CLI::Option* option = sub->get_option_no_throw(name);
      if (option != nullptr && option->count() > 0) {
        files.push_back({name, option->as<std::string>(), output});
      }
    }
  }
  if (!common.metrics_file.empty()) files.push_back({"--metrics-file", common.metrics_file, true});
  return files;
}

// One setup function and the subcommands it declares.
struct CommandSetup {
  std::vector<std::string_view> names;
  void (*setup)(CLI::App&, stockctl::Program&);
};

const std::vector<CommandSetup>& command_setups() {
  using namespace stockctl;
  static const std::vector<CommandSetup> setups{
      {{"get"}, setup_get},
      {{"deduct"}, setup_deduct},
      {{"add"}, setup_add},
      {{"init"}, setup_init},
      {{"rebuild"}, setup_rebuild},
      {{"delete"}, setup_delete},
      {{"export"}, setup_export},
      {{"log"}, setup_log},
      {{"hold", "confirm", "release", "order", "cancel", "reap"}, setup_holds},
      {{"bench"}, setup_bench},
      {{"doctor"}, setup_doctor},
      {{"split"}, setup_split},
      {{"rebalance"}, setup_rebalance},
      {{"library"}, setup_library},
  };
  return setups;
}

// The setup of the subcommand that the command line names (the first word that is a
// subcommand's name), or null. Declaring every subcommand's options costs a one-item command
// more instructions than its whole talk with Redis (docs/benchmarks.md, "One short process"), so
// a command line is parsed first with that subcommand alone. help and __complete need all.
const CommandSetup* named_setup(const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    for (const CommandSetup& setup : command_setups()) {
      for (std::string_view name : setup.names) {
        if (word == name) return &setup;
      }
    }
  }
  return nullptr;
}

// The command line's app, with the common options and `only`'s subcommands, or every
// subcommand when `only` is null.
std::unique_ptr<CLI::App> make_app(stockctl::Program& program, const CommandSetup* only) {
  using namespace stockctl;
  auto app = std::make_unique<CLI::App>(
      "stockctl: deduct, read, give back, load and rebuild inventory kept in Redis", "stockctl");
  app->require_subcommand(1);
  app->fallthrough();  // subcommands created below inherit it
  app->set_version_flag("--version", version_text());
  add_common_options(*app, program.common);
  if (only) {
    only->setup(*app, program);
  } else {
    for (const CommandSetup& setup : command_setups()) setup.setup(*app, program);
    setup_help(*app, program);
    setup_complete(*app, program);
  }
  name_option_values(*app);
  return app;
}

// Parses with the named subcommand alone; true when that succeeded. Anything else (an error,
// --help, --version) is left to the whole app, whose messages know every subcommand: a word that
// another subcommand would take is refused here, never read otherwise, since the one subcommand
// declared is the one the whole app would choose.
bool parsed_alone(const stockctl::SplitCommandLine& words,
                  std::unique_ptr<stockctl::Program>& program, std::unique_ptr<CLI::App>& app) {
  const CommandSetup* only = named_setup(words.options);
  if (only == nullptr) return false;
  program = std::make_unique<stockctl::Program>();
  app = make_app(*program, only);
  try {
    parse_command_line(*app, words);
    return true;
  } catch (const CLI::Error&) {
  } catch (const stockctl::InputError&) {
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stockctl;
  SplitCommandLine words = split_at_double_dash(argc, argv);
  std::unique_ptr<Program> owned;
  std::unique_ptr<CLI::App> app;
  if (!parsed_alone(words, owned, app)) {
    // The app is destroyed before the program its options point into.
    app.reset();
    owned = std::make_unique<Program>();
    app = make_app(*owned, nullptr);
    try {
      parse_command_line(*app, words);
    } catch (const CLI::Success& e) {
      return app->exit(e);
    } catch (const CLI::ParseError& e) {
      // CLI11's own codes start at 100; the contract says usage errors exit 2.
      std::string explained = explain_usage_error(*app, words.options);
      return usage_error(*app, words, explained.empty() ? usage_message(e.what()) : explained);
    } catch (const InputError& e) {
      return usage_error(*app, words, e.what());
    }
  }
  Program& program = *owned;
  set_verbosity(program.common.quiet     ? Verbosity::quiet
                : program.common.verbose ? Verbosity::verbose
                                         : Verbosity::normal);
  for (const CLI::App* sub : app->get_subcommands()) program.op = sub->get_name();
  if (const std::string clash = clashing_files(named_files(*app, program.common)); !clash.empty()) {
    return usage_error(*app, words, clash);
  }
  const auto started = std::chrono::steady_clock::now();
  install_interrupt_handlers();
  // The metrics file is written when the run ends; one that cannot be is said before the run
  // changes anything, as a --report that cannot be written is.
  // A FIFO or device is opened now and kept open: one that no process reads is an error before
  // the run (a cron job that retries on exit 1 must not deduct twice), and its reader sees no
  // end of file until the metrics are written. A regular file is replaced when the run ends.
  std::unique_ptr<AtomicFile> metrics_out;
  if (const std::string& metrics = program.common.metrics_file;
      !metrics.empty() && metrics != "-") {
    try {
      check_output_writable(metrics, "metrics file ");
      if (resolve_output(metrics).mode == OutputMode::in_place) {
        metrics_out = std::make_unique<AtomicFile>(metrics, "metrics file ");
      }
    } catch (const StockctlError& e) {
      print_error(e.what());
      return static_cast<int>(exit_code_for(e));
    }
  }
  ExitCode code = run_guarded(program);
  // What is still buffered for standard output is written now, where a failure can be told:
  // at exit it would be lost without a word (a full disk, a reader that went away).
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::cout.fail()) stop_for_lost_output(errno);
  if (interrupt_signal() != 0) {
    code = exit_code_for_signal(interrupt_signal());
  } else if (const int lost = lost_output_error(); lost != 0) {
    print_error(fmt::format("cannot write standard output: {}", std::strerror(lost)));
    code = most_serious(code, ExitCode::failure);
  }
  if (!program.common.metrics_file.empty()) {
    RunMetrics metrics{
        program.op,
        program.stats,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
        static_cast<int>(code),
        std::time(nullptr),
        program.extra_metrics};
    try {
      write_metrics_file(program.common.metrics_file, metrics, metrics_out.get());
    } catch (const StockctlError& e) {
      print_error(e.what());
      code = most_serious(code, exit_code_for(e));
    }
  }
  return static_cast<int>(code);
}
