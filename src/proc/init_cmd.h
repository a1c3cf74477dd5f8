#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/quantity.h"

namespace stockctl {

/// Runs `command` with /bin/sh -c, the item id in the environment variable STOCKCTL_SKU (never
/// in the command text), and reads its standard output as the initial stock. A command that
/// fails, prints something other than a stock value, or still runs at `deadline` (it is then
/// killed with its process group) yields an error.
ParsedNumber run_init_cmd(const std::string& command, const std::string& sku,
                          std::chrono::steady_clock::time_point deadline);

}  // namespace stockctl
