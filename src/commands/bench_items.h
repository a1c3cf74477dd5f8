#pragma once

#include <string>
#include <vector>

#include "redis/client.h"

namespace stockctl {

/// Creates bench's test items with `stock` units each, refusing to touch any key that already
/// exists: a bench only ever changes and removes keys it created itself.
void create_bench_items(Client& client, const std::vector<std::string>& keys, long long stock);

}  // namespace stockctl
