// stockctl: run inventory kept in Redis. main builds the command line, runs the chosen
// subcommand, and is the one place that turns errors into exit statuses.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/diagnostics.h"
#include "cli/errors.h"
#include "commands/program.h"
#include "version.h"

namespace {

std::string version_text() {
  return fmt::format("stockctl {} ({})", stockctl::kVersion, stockctl::kGitRevision);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stockctl;
  CLI::App app{"stockctl: deduct, read, give back, load and rebuild inventory kept in Redis"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  Program program;
  add_common_options(app, program.common);
  setup_get(app, program);
  setup_deduct(app, program);
  setup_add(app, program);
  setup_init(app, program);
  setup_rebuild(app, program);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes start at 100; the contract says usage errors exit 2.
    print_error(e.what());
    fmt::print(stderr, "Run 'stockctl --help' for usage.\n");
    return static_cast<int>(ExitCode::invalid_input);
  }
  try {
    ExitCode code = program.run();
    std::cout.flush();
    return static_cast<int>(code);
  } catch (const StockctlError& e) {
    std::cout.flush();
    print_error(e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cout.flush();
    print_error(e.what());
    return static_cast<int>(ExitCode::failure);
  }
}
