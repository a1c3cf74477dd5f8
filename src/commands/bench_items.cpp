#include "commands/bench_items.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace stockctl {

void create_bench_items(Client& client, const std::vector<std::string>& keys, long long stock) {
  for (const std::string& key : keys) {
    Reply r = client.call(Call::once({"SET", key, std::to_string(stock), "NX"}));
    if (r.is_nil()) {
      throw InputError(
          fmt::format("refusing to run: {} exists and was not created by this bench", key));
    }
    if (r.is_error()) throw StockctlError(fmt::format("{}: {}", key, r.str));
  }
}

long long percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
}

}  // namespace stockctl
