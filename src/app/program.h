#pragma once

#include <functional>
#include <string>

#include "core/exit_fold.h"
#include "options/options.h"
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

}  // namespace stockctl
