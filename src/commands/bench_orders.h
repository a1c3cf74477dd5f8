#pragma once

#include <string>

#include "app/program.h"
#include "core/exit_fold.h"

namespace stockctl {

/// What `bench --mode order` on a cluster runs.
struct OrderBenchOptions {
  int connections = 50;
  int items = 1000;
  long long stock = 1000000;
  long long requests = 100000;
  double duration_s = 0;  ///< > 0: run for this long instead of a count
  std::string prefix = "stockctl-bench:";
  std::string run_id;   ///< default: random
  int slot_groups = 3;  ///< how many slot groups each 3-line cart spans: 1, 2 or 3
};

/// `bench --mode order --cluster`: 3-line carts of one unit each placed through the cluster
/// protocol (holds/cart_protocol) by `connections` threads, each cart spanning exactly
/// `slot_groups` slot groups. Prints throughput, latency percentiles and the server time per
/// cart (INFO commandstats summed over every primary), checks that every unit taken was
/// reported sold and none is left held, and removes every key it wrote.
ExitCode run_order_bench_on_cluster(Program& program, const OrderBenchOptions& o);

}  // namespace stockctl
