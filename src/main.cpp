// stockctl: run inventory kept in Redis. main builds the command line, runs the chosen
// subcommand, and is the one place that turns errors into exit statuses.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <vector>

#include "cli/common_options.h"
#include "cli/diagnostics.h"
#include "cli/errors.h"
#include "commands/program.h"
#include "output/metrics.h"
#include "version.h"

namespace {

// The first word that is neither an option nor an option's value: what the user meant as the
// command.
std::string first_word(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return i + 1 < argc ? argv[i + 1] : "";
    if (arg.empty() || arg[0] != '-') return arg;
    if (arg.find('=') != std::string::npos) continue;
    const CLI::Option* opt = nullptr;
    try {
      opt = app.get_option(arg);
    } catch (const CLI::OptionNotFound&) {
    }
    if (opt != nullptr && opt->get_expected_max() > 0) ++i;  // skip its value
  }
  return {};
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown command 'dedcut'; did you mean 'deduct'?" when the first word names no subcommand.
std::string unknown_command_message(const CLI::App& app, const std::string& word) {
  std::string best, names;
  std::size_t best_distance = 3;  // farther than this is no likely typo
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    if (name == word) return {};
    if (sub->get_group().empty()) continue;  // hidden
    names += (names.empty() ? "" : ", ") + name;
    if (std::size_t d = edit_distance(word, name); d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  if (!best.empty()) return fmt::format("unknown command '{}'; did you mean '{}'?", word, best);
  return fmt::format("unknown command '{}' (commands: {})", word, names);
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
    return e.code();
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
  setup_bench(app, program);
  setup_help(app, program);
  setup_complete(app, program);
  name_option_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes start at 100; the contract says usage errors exit 2.
    std::string word = first_word(app, argc, argv);
    std::string unknown = word.empty() ? "" : unknown_command_message(app, word);
    print_error(unknown.empty() ? e.what() : unknown);
    fmt::print(stderr, "Run 'stockctl --help' for usage.\n");
    return static_cast<int>(ExitCode::invalid_input);
  }
  set_verbosity(program.common.quiet     ? Verbosity::quiet
                : program.common.verbose ? Verbosity::verbose
                                         : Verbosity::normal);
  for (const CLI::App* sub : app.get_subcommands()) program.op = sub->get_name();
  const auto started = std::chrono::steady_clock::now();
  ExitCode code = run_guarded(program);
  if (!program.common.metrics_file.empty()) {
    RunMetrics metrics{
        program.op, program.stats,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
        static_cast<int>(code), std::time(nullptr)};
    try {
      write_metrics_file(program.common.metrics_file, metrics);
    } catch (const StockctlError& e) {
      print_error(e.what());
      code = most_serious(code, e.code());
    }
  }
  return static_cast<int>(code);
}
