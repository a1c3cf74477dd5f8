#pragma once

#include <CLI/CLI.hpp>

#include "app/program.h"

namespace stockctl {

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
/// hold, confirm, release, order, cancel, reap: carts and reservations.
void setup_holds(CLI::App& app, Program& program);
/// `bench`: a load test on keys it creates and removes itself.
void setup_bench(CLI::App& app, Program& program);
/// `split SKU... --buckets N`: spread hot items over buckets in different slots, or merge them.
void setup_split(CLI::App& app, Program& program);
void setup_rebalance(CLI::App& app, Program& program);
/// `library`: the Functions library's name and functions, for applications.
void setup_library(CLI::App& app, Program& program);
/// The end of `stockctl --help`: source formats, password sources, exit statuses, examples.
std::string program_footer();
/// `help [SUBCOMMAND]`: prints the same text as `--help`; sets the program's footer.
void setup_help(CLI::App& app, Program& program);
/// The hidden `__complete [SUBCOMMAND]` entry point the shell completions call: prints one
/// subcommand or long option per line ("--name=TYPE" for options that take a value).
void setup_complete(CLI::App& app, Program& program);

}  // namespace stockctl
