#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

#include "cli/common_options.h"
#include "cli/exit_code.h"
#include "output/run_stats.h"

namespace stockctl {

/// The parsed command line: common options and what the chosen subcommand will run.
struct Program {
  CommonOptions common;
  std::string op;  ///< the chosen subcommand, for metrics
  RunStats stats;  ///< what the run did, item by item
  std::function<ExitCode()> run;
  std::string extra_metrics;  ///< more --metrics-file lines, in Prometheus text format (doctor)
};

/// Each subcommand declares its options and, when chosen, sets `program.run`.
void setup_get(CLI::App& app, Program& program);
void setup_deduct(CLI::App& app, Program& program);
void setup_add(CLI::App& app, Program& program);
void setup_init(CLI::App& app, Program& program);
void setup_rebuild(CLI::App& app, Program& program);
/// `doctor`: checks the server(s) for what can lose, evict or corrupt stock.
void setup_doctor(CLI::App& app, Program& program);
/// `log SKU`: the item's change log.
void setup_log(CLI::App& app, Program& program);
/// `delete SKU...`: remove items and every companion key.
void setup_delete(CLI::App& app, Program& program);
/// `export`: every item under the prefix, streamed.
void setup_export(CLI::App& app, Program& program);
/// `bench`: a load test on keys it creates and removes itself.
void setup_bench(CLI::App& app, Program& program);
/// The end of `stockctl --help`: source formats, password sources, exit statuses, examples.
std::string program_footer();
/// `help [SUBCOMMAND]`: prints the same text as `--help`; sets the program's footer.
void setup_help(CLI::App& app, Program& program);
/// The hidden `__complete [SUBCOMMAND]` entry point the shell completions call: prints one
/// subcommand or long option per line ("--name=TYPE" for options that take a value).
void setup_complete(CLI::App& app, Program& program);

}  // namespace stockctl
