#include "bulk/replica_ack.h"

#include <fmt/format.h>

#include <algorithm>

namespace stockctl {

namespace {

std::string acked_text(const CallResult& result, const ClientOptions& options) {
  return fmt::format("{} of {} replicas acknowledged within {} ms",
                     std::max(result.replicas_acked, 0), result.replicas_wanted,
                     options.wait_timeout_ms);
}

}  // namespace

bool acknowledged(const CallResult& result, const ClientOptions& /*options*/) {
  // The client knows how many it waited for: --wait-replicas, or by default one where the
  // primary written to has a replica.
  return result.replicas_wanted <= 0 || result.replicas_acked >= result.replicas_wanted;
}

std::string unacknowledged(const CallResult& result, const ClientOptions& options) {
  return "applied on the primary, but its durability is not confirmed: " +
         acked_text(result, options);
}

void check_durability(ItemResult& item, const CallResult& result, const ClientOptions& options) {
  if (acknowledged(result, options)) return;
  set_error(item, Status::error,
            fmt::format("applied on the primary (stock {}), but its durability is not confirmed: "
                        "{}",
                        item.stock ? std::to_string(*item.stock) : "unlimited",
                        acked_text(result, options)));
}

}  // namespace stockctl
