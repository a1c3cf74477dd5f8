#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "redis/client.h"

namespace stockctl {

/// Creates bench's test items with `stock` units each, refusing to touch any key that already
/// exists: a bench only ever changes and removes keys it created itself.
void create_bench_items(Client& client, const std::vector<std::string>& keys, long long stock);

/// The value at fraction `p` (0..1) of `sorted`, which is in ascending order; 0 when empty.
long long percentile(const std::vector<std::uint32_t>& sorted, double p);

}  // namespace stockctl
